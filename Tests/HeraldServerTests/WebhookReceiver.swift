import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A webhook receiver for tests: plain HTTP on 127.0.0.1, a free port, recording every POST to
/// `/hook` and answering with the status a test sets.
final class WebhookReceiver: Sendable {
    struct Received: Sendable {
        var signature: String?
        var eventID: String?
        var eventType: String?
        var body: [UInt8]

        /// The body as a JSON object.
        func json() throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] ?? [:]
        }
    }

    private let state = Mutex<(received: [Received], status: HTTPResponse.Status)>(([], .ok))
    private let task = Mutex<Task<Void, any Error>?>(nil)

    var received: [Received] { state.withLock { $0.received } }

    func answer(_ status: HTTPResponse.Status) {
        state.withLock { $0.status = status }
    }

    /// Starts listening; returns the port.
    func start() async throws -> Int {
        let router = Router()
        router.post("hook") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: 1 << 20)
            let status = self.state.withLock { state in
                state.received.append(
                    Received(
                        signature: request.headers[HTTPField.Name("Herald-Signature")!],
                        eventID: request.headers[HTTPField.Name("Herald-Event-Id")!],
                        eventType: request.headers[HTTPField.Name("Herald-Event-Type")!], body: Array(body.readableBytesView)))
                return state.status
            }
            return Response(status: status, body: .init(byteBuffer: ByteBuffer(string: "answer \(status.code)")))
        }
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "webhook-receiver") { _ in SwiftLogNoOpLogHandler() })
        task.withLock { $0 = Task { try await app.runService(gracefulShutdownSignals: []) } }
        for await port in stream { return port }
        throw CancellationError()
    }

    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = await running?.result
    }

    /// Runs `body` with a started receiver and its port, stopping it afterwards.
    static func with<Result>(_ body: (WebhookReceiver, Int) async throws -> Result) async throws -> Result {
        let receiver = WebhookReceiver()
        let port = try await receiver.start()
        do {
            let result = try await body(receiver, port)
            await receiver.stop()
            return result
        } catch {
            await receiver.stop()
            throw error
        }
    }
}
