import Foundation
import HeraldCore
import HeraldMocks
import HeraldServer
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

@testable import HeraldDelivery

/// The engine against a misbehaving APNs (the mock, over TLS): connections that end with GOAWAY
/// or are reset mid-flight. Every device must still get the push, the counters must add up, and
/// duplicates may come only from requests in flight when a connection was reset.
@Suite struct DeliveryFaultTests {
    /// Workers × batch size: the most requests in flight at once, hence lost with one connection.
    /// Retries start after 50 ms: a device whose requests keep landing on reset connections is
    /// retried until it gets through, and on a loaded machine that may take several rounds.
    static let options = DeliveryWorld.Options(batchSize: 5, workers: 4, firstRetryDelay: .milliseconds(50))
    static let devices = 60

    func broadcast(_ world: DeliveryWorld, _ client: any TestClientProtocol) async throws -> (tokens: [String], status: [String: Any]) {
        var tokens: [String] = []
        for _ in 0..<Self.devices { tokens.append(try await world.register().registrationToken) }
        let receipt = try await world.send(#"{"message":{"body":"through the faults"},"target":{"platform":"ios"}}"#, client)
        return (tokens, try await world.finished(receipt, client))
    }

    func expectAllDelivered(_ status: [String: Any], _ tokens: [String], _ world: DeliveryWorld) {
        #expect(status["targeted"] as? Int == Self.devices)
        #expect(status["delivered"] as? Int == Self.devices)
        #expect(status["failed"] as? Int == 0, "\(status)")
        #expect(status["pending"] as? Int == 0)
        #expect(Set(world.mock.received.map(\.deviceToken)) == Set(tokens))
    }

    /// GOAWAY after every 7 requests on a connection: the streams it names are answered, any
    /// later ones are refused unprocessed and sent again on a new connection — so no device is
    /// lost and none doubled.
    @Test(arguments: Backend.available)
    func goAwaysMakeTheWorkersReconnectWithoutLossOrDuplicates(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, Self.options) { world, client in
            world.mock.update {
                $0.goAwayAfterStreams = 7
                $0.responseDelay = .milliseconds(2)
            }
            let (tokens, status) = try await broadcast(world, client)
            expectAllDelivered(status, tokens, world)
            #expect(world.mock.received.count == Self.devices, "a refused stream was processed")
            let statistics = world.mock.statistics
            // Every connection but perhaps the last ended with a GOAWAY, and the workers went on
            // on a new one.
            #expect(statistics.goAways >= 2)
            #expect(statistics.connections >= statistics.goAways)
        }
    }

    /// Four connections reset after 7 requests each, with answers slow enough that several are
    /// in flight: the requests that lost their answers are sent again, so some devices get two
    /// copies — never more duplicates than the requests that were in flight when a connection
    /// went down. (A provider that resets every connection for good is the outage test below:
    /// there the engine backs off, for minutes.)
    @Test(arguments: Backend.available)
    func droppedConnectionsLoseAnswersButNoDevice(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, Self.options) { world, client in
            world.mock.update {
                $0.dropConnectionAfterRequests = 7
                $0.connectionsToDrop = 4
                $0.responseDelay = .milliseconds(5)
            }
            let (tokens, status) = try await broadcast(world, client)
            expectAllDelivered(status, tokens, world)
            let statistics = world.mock.statistics
            #expect(statistics.droppedConnections == 4)
            let duplicates = world.mock.received.count - Set(world.mock.received.map(\.deviceToken)).count
            let inFlight = Self.options.workers * Self.options.batchSize
            #expect(duplicates <= statistics.droppedConnections * inFlight)
        }
    }

    /// APNs unreachable (every connection reset before it answers) for longer than the
    /// attempts an answering provider gets: the device waits, and gets the push once APNs is
    /// back — an outage is not a failure.
    @Test(arguments: Backend.available)
    func anUnreachableProviderIsWaitedOutBeyondTheAttemptLimit(_ backend: Backend) async throws {
        let options = DeliveryWorld.Options(batchSize: 5, workers: 1, maximumAttempts: 2, firstRetryDelay: .milliseconds(20))
        try await DeliveryWorld.run(backend, options) { world, client in
            let device = try await world.register()
            world.mock.update { $0.dropConnectionAfterRequests = 1 }
            let receipt = try await world.send(#"{"message":{"body":"after the outage"},"target":{"platform":"ios"}}"#, client)
            // Each attempt sends the request three times (twice again at once on a new
            // connection); wait for a third attempt, past maximumAttempts.
            // The deadline is wide: in the whole suite on two cores this test's nine connections
            // and three jobs share the machine with hundreds of tests (CI once took over 30 s).
            let attempts = 1 + Dispatcher.immediateResends
            let deadline = ContinuousClock.now + .seconds(120)
            while world.mock.statistics.droppedConnections < 3 * attempts {
                guard ContinuousClock.now < deadline else {
                    Issue.record("the device was not retried")
                    return
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            world.mock.update { $0.dropConnectionAfterRequests = 0 }
            let status = try await world.finished(receipt, client, within: .seconds(120))
            #expect(status["delivered"] as? Int == 1, "\(status)")
            #expect(status["failed"] as? Int == 0)
            #expect(world.mock.received.map(\.deviceToken).contains(device.registrationToken))
        }
    }

    /// Issue 31, defect 4 (the dispatcher's half): a provider that cannot be reached shows its
    /// cause on the push's status (`last_error`) and in the app's activity log
    /// (`provider_unreachable`) while the devices wait for their retries, not only on stderr.
    @Test(arguments: Backend.available)
    func anUnreachableProvidersCauseShowsOnThePushAndInTheActivityLog(_ backend: Backend) async throws {
        let observability = Observability()
        let options = DeliveryWorld.Options(batchSize: 5, workers: 1, firstRetryDelay: .milliseconds(20), observability: observability)
        try await DeliveryWorld.run(backend, options) { world, client in
            _ = try await world.register()
            world.mock.update { $0.dropConnectionAfterRequests = 1 }
            let receipt = try await world.send(#"{"message":{"body":"waiting"},"target":{"platform":"ios"}}"#, client)
            var status: [String: Any] = [:]
            try await DeliveryWorld.poll("the push shows why it waits", within: .seconds(60)) {
                status = try await world.status(receipt, client)
                return status["last_error"] != nil
            }
            let lastError = try #require(status["last_error"] as? [String: Any])
            #expect((lastError["reason"] as? String)?.isEmpty == false)
            #expect(lastError["at"] is Int)
            #expect(status["status"] as? String == "sending")
            #expect(status["pending"] as? Int == 1)
            let events = observability.activity.recent(world.fixture.app.id).filter { $0.kind == .providerUnreachable }
            #expect(!events.isEmpty)
            #expect(events.first?.provider == "apns")
            #expect(events.first?.message.hasPrefix("the provider could not be reached: ") == true)
            world.mock.update { $0.dropConnectionAfterRequests = 0 }
        }
    }

    /// Past the window, an unreachable provider's devices are failed as `ProviderUnreachable`.
    @Test(arguments: Backend.available)
    func pastTheWindowAnUnreachableProviderFailsTheDevice(_ backend: Backend) async throws {
        let options = DeliveryWorld.Options(batchSize: 5, workers: 1, firstRetryDelay: .milliseconds(20), unreachableRetryWindow: .zero)
        try await DeliveryWorld.run(backend, options) { world, client in
            _ = try await world.register()
            world.mock.update { $0.dropConnectionAfterRequests = 1 }
            let receipt = try await world.send(#"{"message":{"body":"lost cause"},"target":{"platform":"ios"}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["delivered"] as? Int == 0)
            #expect((status["failures"] as? [String: Int]) == ["ProviderUnreachable": 1], "\(status)")
        }
    }
}
