import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldDelivery
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Each application's activity log: the ring buffer, the slow subscriber, the text download,
/// the server-sent event stream, and tenant scoping.
@Suite struct ActivityLogTests {
    static func event(_ n: Int) -> ActivityEvent {
        ActivityEvent(time: Int64(n), kind: .batchSent, counts: ["delivered": n], message: "event \(n)")
    }

    @Test func eachApplicationKeepsItsLastEventsOnly() {
        let log = ActivityLog(capacity: 5)
        let (app, other) = (UUID(), UUID())
        for n in 0..<12 { log.record(Self.event(n), applicationID: app) }
        log.record(Self.event(100), applicationID: other)
        #expect(log.recent(app).map(\.time) == [7, 8, 9, 10, 11])
        #expect(log.recent(other).map(\.time) == [100])
        #expect(log.recent(UUID()).isEmpty)
    }

    @Test func aSlowSubscriberLosesItsOldestEventsAndNeverBlocksTheRecorder() async {
        let log = ActivityLog(capacity: 100, subscriberBuffer: 3)
        let app = UUID()
        let stream = log.subscribe(app)
        // Nobody reads while ten events are recorded: recording returns at once each time.
        for n in 0..<10 { log.record(Self.event(n), applicationID: app) }
        var iterator = stream.makeAsyncIterator()
        var read: [Int64] = []
        for _ in 0..<3 { if let event = await iterator.next() { read.append(event.time) } }
        #expect(read == [7, 8, 9])
        #expect(log.recent(app).count == 10)
    }

    @Test func aCancelledSubscriptionIsForgotten() async throws {
        let log = ActivityLog()
        let app = UUID()
        let reader = Task {
            for await _ in log.subscribe(app) {}
        }
        try await DeliveryWorld.poll("subscribed") { log.subscriberCount(app) == 1 }
        reader.cancel()
        try await DeliveryWorld.poll("unsubscribed") { log.subscriberCount(app) == 0 }
    }

    @Test(arguments: Backend.available)
    func oneTenantNeverSeesAnothersApplicationLog(_ backend: Backend) async throws {
        let observability = Observability()
        try await ServerHarness.run(backend, observability: observability) { harness, client in
            let store = harness.store
            let mine = try #require(try await store.tenants.create(name: "mine"))
            let theirs = try #require(try await store.tenants.create(name: "theirs"))
            let (app, _) = try await store.applications.create(tenantID: mine.id, name: "Mine", description: "")
            let (_, mineToken) = try await store.adminTokens.create(tenantID: mine.id, name: "ops")
            let (_, theirToken) = try await store.adminTokens.create(tenantID: theirs.id, name: "ops")
            observability.activity.record(
                ActivityEvent(time: EpochClock.system.now.epochMilliseconds, kind: .pushAccepted, pushID: UUID(), message: "push accepted"),
                applicationID: app.id)
            let id = app.id.uuidString.lowercased()

            for path in ["/admin/v1/apps/\(id)/logs", "/admin/v1/apps/\(id)/logs/stream"] {
                let refused = try await client.execute(uri: path, method: .get, headers: bearer(theirToken))
                #expect(refused.status == .notFound, "\(path)")
                #expect(!String(buffer: refused.body).contains("push accepted"))
                #expect(try await client.execute(uri: path, method: .get).status == .unauthorized)
            }
            #expect(observability.activity.subscriberCount(app.id) == 0)

            for token in [mineToken, harness.adminToken] {
                let log = try await client.execute(uri: "/admin/v1/apps/\(id)/logs", method: .get, headers: bearer(token))
                #expect(log.status == .ok)
                #expect(log.headers[.contentType] == "text/plain; charset=utf-8")
                #expect(String(buffer: log.body).contains("push_accepted push accepted"))
            }
            let unknown = try await client.execute(uri: "/admin/v1/apps/\(UUID())/logs", method: .get, headers: bearer(harness.adminToken))
            #expect(unknown.status == .notFound)
        }
    }

    @Test(arguments: Backend.available)
    func theStreamShowsAPushAcceptedAndItsBatchesLive(_ backend: Backend) async throws {
        // A short keep-alive: the server notices the client left at its next write.
        let observability = Observability(ObservabilityConfiguration(streamHeartbeat: .milliseconds(200)))
        try await DeliveryWorld.run(backend, .init(batchSize: 10, observability: observability, setup: .live)) { world, client in
            let port = try #require(client.port)
            let root = try await world.db.store.adminTokens.create(tenantID: nil, name: "root").1
            let devices = [try await world.register(), try await world.register()]
            let appID = world.fixture.app.id
            let url = "http://127.0.0.1:\(port)/admin/v1/apps/\(appID.uuidString.lowercased())/logs/stream"

            let reader = Task { try await Self.readStream(url, token: root, until: { Self.hasWholeEvent("batch_sent", in: $0) }) }
            try await DeliveryWorld.poll("the stream is subscribed") { observability.activity.subscriberCount(appID) == 1 }

            let receipt = try await world.send(#"{"message":{"body":"Live"},"target":{"platforms":["ios"]}}"#, client)
            let streamed = try await reader.value
            #expect(streamed.hasPrefix(": subscribed"))
            #expect(streamed.contains("event: push_accepted\ndata: {"))
            #expect(streamed.contains(#""push_id":"\#(receipt)""#))
            #expect(streamed.contains(#""counts":{"delivered":2}"#))
            for device in devices { #expect(!streamed.contains(device.registrationToken)) }

            // The client went away: the server lets its subscription go.
            try await DeliveryWorld.poll("the subscription ends") {
                observability.activity.subscriberCount(appID) == 0
            }

            let log = try await client.execute(
                uri: "/admin/v1/apps/\(appID.uuidString.lowercased())/logs", method: .get, headers: bearer(root))
            let text = String(buffer: log.body)
            #expect(text.contains("push_accepted push accepted push=\(receipt)"))
            #expect(text.contains("batch_sent"))
            #expect(text.contains("delivered=2"))
        }
    }

    /// Whether `text` holds the whole `kind` event: its `event:` line, its data and the blank line
    /// that ends it (the stream arrives in chunks that may cut an event in two).
    static func hasWholeEvent(_ kind: String, in text: String) -> Bool {
        guard let start = text.range(of: "event: \(kind)\n") else { return false }
        return text[start.upperBound...].contains("\n\n")
    }

    /// Reads the event stream at `url` until `done` holds for what arrived, then closes the connection.
    static func readStream(_ url: String, token: String, until done: @Sendable (String) -> Bool) async throws -> String {
        // A client of its own, shut down afterwards: that closes the connection for sure.
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let received = try await readStream(url, token: token, with: http, until: done)
            try await http.shutdown()
            return received
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    private static func readStream(
        _ url: String, token: String, with http: HTTPClient, until done: @Sendable (String) -> Bool
    ) async throws -> String {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(30))
        guard response.status == .ok else { throw TestFailure(message: "stream answered \(response.status)") }
        #expect(response.headers.first(name: "content-type") == "text/event-stream")
        var received = ""
        let deadline = ContinuousClock.now + .seconds(30)
        for try await chunk in response.body {
            received += String(buffer: chunk)
            if done(received) { return received }
            if ContinuousClock.now > deadline { break }
        }
        throw TestFailure(message: "the stream ended or timed out before the expected event: \(received)")
    }
}
