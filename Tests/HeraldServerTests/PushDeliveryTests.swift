import Crypto
import Foundation
import HeraldCore
import HeraldDelivery
import HeraldMocks
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import ServiceLifecycle
import Testing

/// Pushes through the API, the job queue and the delivery workers to the mock APNs over TLS.
@Suite struct PushDeliveryTests {
    /// An accepted push wakes the idle workers, and a fan-out page wakes them for its batch: with
    /// workers that would otherwise look at the queue only every two minutes, a push of several
    /// batches is still delivered at once.
    @Test(arguments: Backend.available)
    func anAcceptedPushWakesIdleWorkers(_ backend: Backend) async throws {
        var options = DeliveryWorld.Options()
        options.idlePoll = .seconds(120)
        try await DeliveryWorld.run(backend, options) { world, client in
            for _ in 0..<5 { _ = try await world.register() }
            let receipt = try await world.send(#"{"message":{"body":"Now"},"target":{"platforms":["ios"]}}"#, client)
            let status = try await world.finished(receipt, client, within: .seconds(20))
            #expect(status["delivered"] as? Int == 5)
        }
    }

    @Test(arguments: Backend.available)
    func aBroadcastIsDeliveredAndDeadTokensAreDeactivated(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let live = [try await world.register(), try await world.register(), try await world.register()]
            let dead = try await world.register()
            world.mock.update { $0.unregistered[dead.registrationToken] = EpochClock.system.now.epochMilliseconds + 60_000 }

            let receipt = try await world.send(#"{"message":{"body":"Town Hall"},"target":{"platforms":["ios"]}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["targeted"] as? Int == 4)
            #expect(status["delivered"] as? Int == 3)
            #expect(status["invalid_tokens"] as? Int == 1)
            #expect(status["pending"] as? Int == 0)

            let received = world.mock.received
            #expect(Set(received.map(\.deviceToken)) == Set(live.map(\.registrationToken)))
            for notification in received {
                let payload = try JSONSerialization.jsonObject(with: Data(notification.payload)) as? [String: Any]
                #expect(payload?["receiptId"] as? String == receipt)
                #expect(notification.headers["apns-topic"] == "com.example.news")
            }
            let stored = try #require(try await world.db.store.devices.find(platformID: world.fixture.platform.id, uuid: dead.uuid))
            #expect(!stored.active)
        }
    }

    @Test(arguments: Backend.available)
    func topicsAndCustomUserIDsReachTheUnionOnceEach(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let both = try await world.register(tags: ["news"], customUserID: "ann")
            let topic = try await world.register(tags: ["news"])
            let user = try await world.register(customUserID: "ann")
            _ = try await world.register(tags: ["sports"], customUserID: "bob")
            let receipt = try await world.send(
                #"{"message":{"body":"hi"},"target":{"topics":["NEWS"],"custom_user_ids":["ann"]}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["delivered"] as? Int == 3)
            let tokens = world.mock.received.map(\.deviceToken)
            #expect(tokens.count == 3)
            #expect(Set(tokens) == Set([both, topic, user].map(\.registrationToken)))
        }
    }

    @Test(arguments: Backend.available)
    func unavailableAnswersAreRetriedAndThrottlingFailsAfterTheLastAttempt(_ backend: Backend) async throws {
        // Three attempts: the two 503s may both fall on one device, which must still get through.
        try await DeliveryWorld.run(backend, .init(maximumAttempts: 3)) { world, client in
            let devices = [try await world.register(), try await world.register(), try await world.register()]
            let throttled = try await world.register()
            world.mock.update {
                $0.serviceUnavailable = 2
                $0.throttled = [throttled.registrationToken]
            }
            let receipt = try await world.send(#"{"message":{"body":"again"},"target":{"platform":"ios"}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["delivered"] as? Int == 3)
            #expect(status["failed"] as? Int == 1)
            #expect((status["failures"] as? [String: Int]) == ["TooManyRequests": 1])
            #expect(Set(world.mock.received.map(\.deviceToken)) == Set(devices.map(\.registrationToken)))
            // Throttling is not a dead token: the device stays.
            let kept = try #require(try await world.db.store.devices.find(platformID: world.fixture.platform.id, uuid: throttled.uuid))
            #expect(kept.active)
        }
    }

    @Test(arguments: Backend.available)
    func anExpiredPushIsCountedNotSentAndBadPushesAreRefused(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            _ = try await world.register()
            let receipt = try await world.send(#"{"message":{"body":"late"},"target":{"platform":"all"},"expiryTime":1000}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["expired"] as? Int == 1)
            #expect(world.mock.received.isEmpty)

            let big = String(repeating: "x", count: 5000)
            let tooLarge = try await client.execute(
                uri: "/v1/push", method: .post, headers: appAuth(world.fixture),
                body: body(#"{"message":{"body":"\#(big)"},"target":{"platform":"ios"}}"#))
            #expect(tooLarge.status == .badRequest)
            #expect(try tooLarge.error()["code"] as? String == "payload_too_large")
            let check = try await client.execute(
                uri: "/v1/push", method: .post, headers: appAuth(world.fixture),
                body: body(#"{"message":{"body":"x"},"target":{"platform":"ios"},"validate_only":true}"#))
            #expect(try check.json()["valid"] as? Bool == true)
            let other = try await client.execute(uri: "/v1/push/\(receipt)", method: .get, headers: basic(world.fixture))
            #expect(other.status == .unauthorized)
        }
    }
}

/// The workers stop on a graceful shutdown.
@Suite struct DeliveryShutdownTests {
    @Test func aGracefulShutdownStopsTheWorkers() async throws {
        try await withTestDatabase(.sqlite) { db async throws in
            var configuration = DeliveryConfiguration()
            configuration.idlePoll = .milliseconds(10)
            let service = DeliveryService(store: db.store, configuration: configuration, logger: TestDatabase.logger)
            let group = ServiceGroup(configuration: .init(services: [service], logger: TestDatabase.logger))
            let running = Task { try await group.run() }
            // The workers are running once they have finished a push (polled, with a deadline).
            let fixture = try await Fixture.make(db.store)
            let id = try await db.store.pushes.create(
                applicationID: fixture.app.id, try .accepting(#"{"message":{"body":"x"},"target":{"platform":"ios"}}"#))
            let started = ContinuousClock.now
            while try await db.store.pushes.find(id: id, applicationID: fixture.app.id)?.status != "done" {
                guard ContinuousClock.now - started < .seconds(10) else {
                    running.cancel()
                    Issue.record("the workers never took the push")
                    return
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            await group.triggerGracefulShutdown()
            // The group must end on its own well before the deadline; past it, the test cancels it and fails.
            let stoppedInTime = try await withThrowingTaskGroup(of: Bool.self) { watch in
                watch.addTask {
                    try await running.value
                    return true
                }
                watch.addTask {
                    try? await Task.sleep(for: .seconds(10))
                    running.cancel()
                    return false
                }
                let first = try await watch.next() ?? false
                watch.cancelAll()
                return first
            }
            #expect(stoppedInTime)
        }
    }

    /// Runs `group` until `body` returns, then shuts it down gracefully; fails unless it ends
    /// within `deadline` on its own.
    func running(_ group: ServiceGroup, stopsWithin deadline: Duration, _ body: () async throws -> Void) async throws {
        let running = Task { try await group.run() }
        do {
            try await body()
        } catch {
            running.cancel()
            throw error
        }
        await group.triggerGracefulShutdown()
        let stoppedInTime = try await withThrowingTaskGroup(of: Bool.self) { watch in
            watch.addTask {
                try await running.value
                return true
            }
            watch.addTask {
                try? await Task.sleep(for: deadline)
                running.cancel()
                return false
            }
            let first = try await watch.next() ?? false
            watch.cancelAll()
            return first
        }
        #expect(stoppedInTime, "the workers did not stop within \(deadline)")
    }

    /// A graceful shutdown while a batch waits for slow answers: APNs takes a batch on its
    /// connection at once, so the whole batch is in flight; its answers are awaited and recorded
    /// before the workers stop, and the next workers send nothing again. (Providers sent one
    /// request at a time stop starting new ones and put the rest back: `WNSClient` with
    /// `BoundedConcurrency`, `ProviderSendError.notStarted`.)
    @Test(arguments: Backend.available)
    func aGracefulShutdownFinishesTheBatchInFlight(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(workers: 0)) { world, client in
            var tokens: Set<String> = []
            for _ in 0..<10 { tokens.insert(try await world.register().registrationToken) }
            world.mock.update { $0.responseDelay = .milliseconds(300) }
            var configuration = world.configuration
            configuration.workers = 1
            configuration.batchSize = 10
            configuration.sendConcurrency = 2
            let receipt = try await world.send(#"{"message":{"body":"x"},"target":{"platform":"ios"}}"#, client)

            let first = ServiceGroup(
                configuration: .init(
                    services: [DeliveryService(store: world.db.store, configuration: configuration, logger: TestDatabase.logger)],
                    logger: TestDatabase.logger))
            // (It takes about 0.5 s; the deadline is for a loaded CI machine, where this has overrun
            // 10 s once in a dozen full runs, and still catches workers that never stop.)
            try await running(first, stopsWithin: .seconds(30)) {
                try await DeliveryWorld.poll("two sends are in flight") { world.mock.statistics.requests >= 2 }
            }
            let statistics = world.mock.statistics
            #expect(statistics.requests == 10)
            #expect(statistics.answered == statistics.requests)
            let status = try await world.status(receipt, client)
            #expect(status["delivered"] as? Int == 10)
            #expect(status["pending"] as? Int == 0)

            world.mock.update { $0.responseDelay = .zero }
            let second = ServiceGroup(
                configuration: .init(
                    services: [DeliveryService(store: world.db.store, configuration: configuration, logger: TestDatabase.logger)],
                    logger: TestDatabase.logger))
            try await running(second, stopsWithin: .seconds(10)) {
                let done = try await world.finished(receipt, client)
                #expect(done["delivered"] as? Int == 10)
            }
            let received = world.mock.received.map(\.deviceToken)
            #expect(received.count == 10)
            #expect(Set(received) == tokens)
        }
    }
}
