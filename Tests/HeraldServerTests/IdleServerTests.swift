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
import Logging
import Testing

/// Idle means idle: a server built by `buildApplication`, every service running, asks the store
/// nothing while nothing is due, yet wakes at once for work it is given, for work another process
/// is given (PostgreSQL), and for work that comes due while it sleeps.
@Suite(.serialized) struct IdleServerTests {
    /// SQLite: zero statements over an idle window; then a push accepted is delivered at once,
    /// and a push scheduled for two seconds later is delivered when due, though every loop's
    /// safety poll is the default ten minutes.
    @Test func anIdleSQLiteServerAsksTheStoreNothingAndStillDeliversAtOnce() async throws {
        try await IdleWorld.run(.sqlite) { world in
            var configuration = world.serverConfiguration()
            configuration.scheduling.sendImmediatelyWithin = .zero
            let app = buildApplication(configuration, store: world.db.store, logger: TestDatabase.logger)
            let workers = configuration.delivery.workers
            try await app.test(.live) { client in
                let database = world.db.database
                try await IdleWorld.settled(world.db.store, workers: workers)
                let before = database.statementsExecuted
                // The observation window itself: nothing is awaited, the test asserts that
                // nothing happens during it (the workers used to look every 200 ms).
                try await Task.sleep(for: .seconds(2))
                #expect(database.statementsExecuted == before, "an idle server ran \(database.statementsExecuted - before) statements")

                let device = try await world.register()
                _ = try await world.send(#"{"message":{"body":"Now"},"target":{"platforms":["ios"]}}"#, client)
                // A bound far below the ten-minute safety poll (a missed wake-up sleeps that long),
                // yet loose enough for the whole suite on two cores, where CI once took 20.8 s.
                try await DeliveryWorld.poll("the push reaches the mock", within: .seconds(120)) {
                    world.mock.received.contains { $0.deviceToken == device.registrationToken }
                }

                // A schedule made while every loop sleeps: the scheduler wakes for it, sleeps until
                // it is due, and the workers wake for the push it fires.
                let due = EpochClock.system.now.epochMilliseconds + 2000
                let response = try await client.execute(
                    uri: "/v1/push", method: .post, headers: appAuth(world.fixture),
                    body: body(#"{"message":{"body":"Later"},"target":{"platforms":["ios"]},"scheduleAt":\#(due)}"#))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                try await DeliveryWorld.poll("the scheduled push reaches the mock", within: .seconds(120)) {
                    world.mock.received.count == 2
                }
                let late = EpochClock.system.now.epochMilliseconds - due
                #expect(late >= 0)
                #expect(late < 60_000, "the scheduled push arrived \(late) ms after its time")
            }
        }
    }

    /// A retry comes due while the workers sleep (their safety poll two minutes): it is sent
    /// when due, because a worker's sleep ends at the queue's next due job.
    @Test(arguments: Backend.available)
    func aRetryComingDueWhileTheWorkersSleepIsTakenOnTime(_ backend: Backend) async throws {
        var options = DeliveryWorld.Options()
        options.idlePoll = .seconds(120)
        options.firstRetryDelay = .seconds(1)
        try await DeliveryWorld.run(backend, options) { world, client in
            _ = try await world.register()
            world.mock.update { $0.serviceUnavailable = 1 }
            let accepted = ContinuousClock.now
            let receipt = try await world.send(#"{"message":{"body":"Again"},"target":{"platforms":["ios"]}}"#, client)
            let status = try await world.finished(receipt, client, within: .seconds(100))
            #expect(status["delivered"] as? Int == 1)
            #expect(world.mock.statistics.requests == 2)
            // Retried after its one-second delay, not after the two-minute poll (the bound leaves
            // room for the whole suite on two cores).
            #expect(ContinuousClock.now - accepted < .seconds(90))
        }
    }

    /// PostgreSQL: a push accepted by process A (no workers of its own) is taken by process B,
    /// whose safety poll is a minute, within 100 ms: A's announcement reaches B by NOTIFY.
    @Test func anotherProcessesPushWakesThisOneThroughNotify() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await IdleWorld.run(.postgres) { world in
            let url = try #require(world.db.databaseURL)
            let storeA = try await IdleWorld.store(url: url)
            let storeB = try await IdleWorld.store(url: url)
            var configurationA = world.serverConfiguration()
            configurationA.delivery.workers = 0
            var configurationB = world.serverConfiguration()
            configurationB.delivery.idlePoll = .seconds(60)
            configurationB.scheduling.maximumSleep = .seconds(60)
            let appA = buildApplication(configurationA, store: storeA, logger: TestDatabase.logger)
            let appB = buildApplication(configurationB, store: storeB, logger: TestDatabase.logger)
            let workersB = configurationB.delivery.workers
            let leaseB = configurationB.delivery.lease.milliseconds
            try await appA.test(.live) { clientA in
                try await appB.test(.live) { _ in
                    try await DeliveryWorld.poll("B listens", within: .seconds(10)) { storeB.work.listeningStarts > 0 }
                    try await IdleWorld.settled(storeB, workers: workersB)
                    let device = try await world.register()
                    let receipt = try await world.send(#"{"message":{"body":"Elsewhere"},"target":{"platforms":["ios"]}}"#, clientA)
                    // Accepted: A has answered (read once the answer is here, so a little late).
                    let acceptedAt = EpochClock.system.now.epochMilliseconds
                    let pushID = try #require(UUID(uuidString: receipt))
                    let fanout: SQL = """
                        SELECT state, lease_until FROM push_jobs WHERE push_id = \(pushID) AND kind = 'fanout'
                        """
                    try await DeliveryWorld.poll("B takes the push", within: .seconds(10)) {
                        try await world.db.database.query(fanout).first?.string("state") != "ready"
                    }
                    // The claim is timed by its row, not by this poll: B set the lease to its clock
                    // (the machine's, as this test's) plus the lease.
                    let row = try #require(try await world.db.database.query(fanout).first)
                    let claimedAt = try row.int("lease_until") - leaseB
                    let elapsed = claimedAt - acceptedAt
                    #expect(elapsed < 100, "B took A's push \(elapsed) ms after its acceptance")
                    try await DeliveryWorld.poll("B delivers it", within: .seconds(10)) {
                        world.mock.received.contains { $0.deviceToken == device.registrationToken }
                    }
                }
            }
        }
    }
}

/// A fresh database with the "News" iOS fixture and a mock APNs, for servers built by
/// `buildApplication` (the world's own `configuration` sends to the mock; no workers run).
enum IdleWorld {
    static func run(_ backend: Backend, _ body: @escaping @Sendable (DeliveryWorld) async throws -> Void) async throws {
        let (mock, key, configuration) = try await DeliveryWorld.startMock()
        do {
            try await withTestDatabase(backend) { db in
                let fixture = try await DeliveryWorld.iOSFixture(db.store, key: key)
                try await body(DeliveryWorld(db: db, mock: mock, fixture: fixture, configuration: configuration))
            }
        } catch {
            await mock.shutdown()
            throw error
        }
        await mock.shutdown()
    }

    /// A store of its own on the test's PostgreSQL database (as another process would have).
    static func store(url: String) async throws -> Store {
        let database = try PostgresStoreDatabase(url: url, maximumConnections: 8, logger: TestDatabase.logger)
        return Store(
            database: database, secretBox: try SecretBox(keyBytes: Array(repeating: 7, count: 32)),
            logger: TestDatabase.logger)
    }

    /// Waits until every delivery worker and the scheduler sleep and the store's statement count
    /// has stood still for half a second (the services' start-up passes are over).
    static func settled(_ store: Store, workers: Int) async throws {
        let jobs = store.work.signal(for: .deliveryJobs)
        let schedules = store.work.signal(for: .scheduledPushes)
        var last = -1
        var stillSince = ContinuousClock.now
        try await DeliveryWorld.poll("the server settles", within: .seconds(20)) {
            let count = store.database.statementsExecuted
            if count != last {
                last = count
                stillSince = ContinuousClock.now
            }
            return jobs.waiting == workers && schedules.waiting == 1 && ContinuousClock.now - stillSince > .milliseconds(500)
        }
    }
}

extension DeliveryWorld {
    /// A whole server on a free port, with this world's delivery configuration (the mock).
    func serverConfiguration() -> ServerConfiguration {
        var server = ServerConfiguration(port: 0, dataDirectory: db.directory, logLevel: .warning)
        server.delivery = configuration
        server.dashboardAssets = nil
        return server
    }
}
