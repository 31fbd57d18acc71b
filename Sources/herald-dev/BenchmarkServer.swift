import AsyncHTTPClient
import NIOCore
import NIOPosix

/// What the benchmarks share to run `herald serve` as a child process and read their samples.
enum BenchmarkServer {
    /// A port free on 127.0.0.1 right now.
    static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }

    /// Waits (a minute at most) until the server at `base` answers `/healthz`.
    static func waitUntilServing(_ base: String, server: ChildProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            guard server.isRunning else { throw BenchmarkError("the server exited; its output is in \(server.logPath)") }
            if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/healthz"), timeout: .seconds(2)),
                response.status == .ok
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchmarkError("the server did not answer within a minute; its output is in \(server.logPath)")
    }

    /// The value at `fraction` (0.5 for the median) of ascending `sorted` samples.
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
}
