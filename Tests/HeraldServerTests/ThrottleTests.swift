import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Testing

/// `rate.per_second` on a push, and an app's default rate: batches of at most the rate, each
/// claimable a second after the one before and let through the send gate one a second, through
/// the workers to the mock APNs.
@Suite struct ThrottleTests {
    /// The push's batch jobs: their sizes and when each became claimable (epoch ms).
    func batches(_ receipt: String, _ world: DeliveryWorld) async throws -> [(size: Int, availableAt: Int64)] {
        let id = try #require(UUID(uuidString: receipt))
        return try await world.db.database.query(
            "SELECT device_ids, available_at FROM push_jobs WHERE push_id = \(id) AND kind = 'batch' ORDER BY available_at, id"
        ).map { row in
            (try row.string("device_ids").split(separator: ",").count, try row.int("available_at"))
        }
    }

    /// When the mock received the notifications whose body contains `marker` (ns, sorted).
    func arrivals(of marker: String, _ world: DeliveryWorld) -> [UInt64] {
        zip(world.mock.received, world.mock.arrivals.arrivalTimes)
            .filter { String(decoding: $0.0.payload, as: UTF8.self).contains(marker) }
            .map(\.1).sorted()
    }

    @Test(arguments: Backend.available)
    func aPushWithARateIsSentInBatchesOfAtMostTheRateASecondApart(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(batchSize: 500, workers: 4)) { world, client in
            for _ in 0..<6 { _ = try await world.register() }
            // A first push opens the connection to the mock, so that arrival times below measure
            // when batches were sent, not a TLS handshake.
            _ = try await world.finished(try await world.send(#"{"message":{"body":"warm-up"},"target":{"platform":"ios"}}"#, client), client)
            let receipt = try await world.send(
                #"{"message":{"body":"slowly"},"target":{"platform":"ios"},"rate":{"per_second":2}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["delivered"] as? Int == 6)
            let jobs = try await batches(receipt, world)
            // (Their available_at was a second apart when made; the send gate may have moved it since.)
            #expect(jobs.map(\.size) == [2, 2, 2])
            // At the mock: the batches started a second apart (the send gate, which the store test
            // below checks exactly); arrival adds each batch's own latency, which a loaded machine
            // stretches by hundreds of milliseconds, hence the slack. Unthrottled, all six arrive
            // within milliseconds.
            let times = arrivals(of: "slowly", world)
            #expect(times.count == 6)
            for index in 0..<(times.count - 2) {
                #expect(times[index + 2] - times[index] >= 300_000_000, "arrivals \(index) and \(index + 2)")
            }
            #expect(times[4] - times[0] >= 1_500_000_000)
        }
    }

    @Test(arguments: Backend.available)
    func theSendGateLetsOneBatchASecondThroughOnTheStoresClock(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, now: { clock.now }) { db in
            let fixture = try await Fixture.make(db.store)
            let id = try await db.store.pushes.create(
                applicationID: fixture.app.id, request: #"{"message":{"body":"x"},"target":{"platform":"all"}}"#, expiresAt: nil)
            #expect(try await db.store.pushes.takeSendSlot(pushID: id) == nil)  // not throttled
            let (fanout, _) = try #require(try await db.store.pushes.claim(lease: 30_000))
            try await db.store.pushes.advance(fanout, page: [1, 2], through: 2, finished: true, ratePerSecond: 2)
            #expect(try await db.store.pushes.takeSendSlot(pushID: id) == nil)
            #expect(try await db.store.pushes.takeSendSlot(pushID: id) == clock.now + 1000)
            clock.advance(999)
            #expect(try await db.store.pushes.takeSendSlot(pushID: id) == clock.now + 1)
            clock.advance(1)
            #expect(try await db.store.pushes.takeSendSlot(pushID: id) == nil)
            #expect(try await db.store.pushes.takeSendSlot(pushID: id) == clock.now + 1000)
        }
    }

    @Test(arguments: Backend.available)
    func theAppsDefaultRateAppliesToPushesWithoutTheirOwn(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(batchSize: 500, workers: 4)) { world, client in
            try await world.db.store.deliverySettings.save(AppDeliverySettings(ratePerSecond: 3), applicationID: world.fixture.app.id)
            for _ in 0..<7 { _ = try await world.register() }
            _ = try await world.finished(
                try await world.send(#"{"message":{"body":"warm-up"},"target":{"platform":"ios"},"rate":{"per_second":50}}"#, client),
                client)
            let receipt = try await world.send(#"{"message":{"body":"default"},"target":{"platform":"ios"}}"#, client)
            #expect(try await world.finished(receipt, client)["delivered"] as? Int == 7)
            let jobs = try await batches(receipt, world)
            #expect(jobs.map(\.size) == [3, 3, 1])
            let times = arrivals(of: "default", world)
            #expect(times.count == 7)
            #expect(times[6] - times[0] >= 1_500_000_000)

            // A push's own rate wins over the app's.
            let fast = try await world.send(
                #"{"message":{"body":"own"},"target":{"platform":"ios"},"rate":{"per_second":100}}"#, client)
            _ = try await world.finished(fast, client)
            #expect(try await batches(fast, world).map(\.size) == [7])
        }
    }
}
