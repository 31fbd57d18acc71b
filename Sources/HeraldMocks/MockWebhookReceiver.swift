import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A webhook receiver over TLS (HTTP/1.1, `MockTLS`'s certificate), for the tests of Herald's
/// webhook deliveries over https: records each POST with its Herald headers and answers with
/// the status a test sets.
package final class MockWebhookReceiver: Sendable {
    /// One POST as it arrived.
    package struct Received: Sendable, Equatable {
        package var path: String
        package var signature: String?
        package var eventID: String?
        package var eventType: String?
        package var body: [UInt8]
    }

    private struct State {
        var received: [Received] = []
        var status: HTTPResponseStatus = .ok
        var channel: (any Channel)?
    }

    private let tls: MockTLS
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let state = Mutex(State())

    package init(tls: MockTLS) {
        self.tls = tls
    }

    /// What arrived so far, in order.
    package var received: [Received] { state.withLock { $0.received } }

    /// Answers every later request with `code`.
    package func answer(_ code: Int) {
        state.withLock { $0.status = HTTPResponseStatus(statusCode: code) }
    }

    /// Listens on 127.0.0.1; returns the port.
    package func start(port: Int = 0) async throws -> Int {
        let (channel, bound) = try await MockHTTPListener.bind(
            group: group, tls: tls, protocols: ["http/1.1"], host: "127.0.0.1", port: port
        ) { head, body in
            let status = self.state.withLock { state in
                state.received.append(
                    Received(
                        path: head.uri, signature: head.headers.first(name: "Herald-Signature"),
                        eventID: head.headers.first(name: "Herald-Event-Id"), eventType: head.headers.first(name: "Herald-Event-Type"),
                        body: Array(body.readableBytesView)))
                return state.status
            }
            return MockHTTPResponse(status: status, body: ByteBuffer(string: "answer \(status.code)"))
        }
        state.withLock { $0.channel = channel }
        return bound
    }

    package func shutdown() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }
}
