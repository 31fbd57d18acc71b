import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

/// The independent APNs-shaped endpoint `herald-dev bench fanout --sink h2o` measures against:
/// `../shared/bench/h2o-apns-sink/run-sink`, h2o (a C HTTP/2 server) answering every
/// `POST /3/device/<token>` with 200 and a fresh `apns-id`, and `GET /count` with the requests it
/// accepted. Herald does not control it and must not tune it; it only starts, reads and stops it.
struct H2OSink {
    /// `https://127.0.0.1:PORT`.
    let url: String
    /// The throw-away CA its certificate chains to (for HERALD_EXTRA_CA_FILE and for reading `/count`).
    let caPEM: String
    private let directory: String
    private let client: HTTPClient

    /// Runs `script` (run-sink) on a free port with its files in `directory`, and waits until it answers.
    static func start(script: String, directory: String) async throws -> H2OSink {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            throw BenchmarkError("the h2o sink script is not at \(script) (pass --sink-script PATH to run-sink)")
        }
        guard ["/usr/bin/h2o", "/usr/local/bin/h2o"].contains(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BenchmarkError("h2o is not installed: apt-get install -y h2o")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let port = try await BenchmarkServer.freePort()
        let runner = try ChildProcess(
            name: "run-sink", executable: script, arguments: [String(port), directory], logPath: directory + "/run-sink.log")
        // run-sink leaves h2o running detached, and h2o inherits the script's descriptors, which
        // keeps Foundation's Process reporting the script as running: wait for its ready line.
        _ = try await runner.waitForLine(containing: "h2o sink on", timeout: .seconds(30))
        let caPEM = try String(contentsOfFile: directory + "/ca.pem", encoding: .utf8)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMBytes(Array(caPEM.utf8)))]
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        return H2OSink(url: "https://127.0.0.1:\(port)", caPEM: caPEM, directory: directory, client: client)
    }

    /// The requests the sink has accepted so far (exact: it runs one thread).
    func count() async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url + "/count"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1024)
        guard response.status == .ok, let count = Int(String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchmarkError("the sink's /count answered \(response.status): \(String(buffer: body))")
        }
        return count
    }

    /// h2o's process id, from its pid file.
    var pid: Int32? {
        (try? String(contentsOfFile: directory + "/h2o-sink.pid", encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Kills h2o (it runs detached, its pid in the pid file) and stops the reading client.
    func stop() async {
        try? await client.shutdown()
        if let pid {
            // SIGKILL: h2o is started from this process and inherits its blocked signal mask
            // (SIGTERM stays pending for ever); the sink holds nothing that needs a clean exit.
            kill(pid, SIGKILL)
        }
    }
}
