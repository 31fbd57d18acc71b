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

    /// How many notifications whose body contains `marker` the mock has received.
    func arrivals(of marker: String, _ world: DeliveryWorld) -> Int {
        world.mock.received.filter { String(decoding: $0.payload, as: UTF8.self).contains(marker) }.count
    }

    /// With the store's and the workers' clock standing still, the first batch goes out and the
    /// others wait; each second the clock moves lets exactly one more batch through. `counts`:
    /// how many notifications have arrived after each step.
    func expectOneBatchPerSecond(_ marker: String, counts: [Int], _ clock: TestClock, _ world: DeliveryWorld) async throws {
        for (step, count) in counts.enumerated() {
            if step > 0 { clock.advance(1000) }
            try await DeliveryWorld.poll("\(count) \(marker) notifications arrived") { arrivals(of: marker, world) >= count }
            #expect(arrivals(of: marker, world) == count, "after \(step) s")
        }
    }

    @Test(arguments: Backend.available)
    func aPushWithARateIsSentInBatchesOfAtMostTheRateASecondApart(_ backend: Backend) async throws {
        let clock = TestClock(EpochClock.system.now.epochMilliseconds)
        try await DeliveryWorld.run(backend, .init(batchSize: 500, workers: 4, clock: clock.epochClock)) { world, client in
            for _ in 0..<6 { _ = try await world.register() }
            let receipt = try await world.send(
                #"{"message":{"body":"slowly"},"target":{"platform":"ios"},"rate":{"per_second":2}}"#, client)
            try await expectOneBatchPerSecond("slowly", counts: [2, 4, 6], clock, world)
            let status = try await world.finished(receipt, client)
            #expect(status["delivered"] as? Int == 6)
            #expect(try await batches(receipt, world).map(\.size) == [2, 2, 2])
        }
    }

    @Test(arguments: Backend.available)
    func theSendGateLetsOneBatchASecondThroughOnTheStoresClock(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db in
            let fixture = try await Fixture.make(db.store)
            let id = try await db.store.pushes.create(
                applicationID: fixture.app.id, try .accepting(#"{"message":{"body":"x"},"target":{"platform":"all"}}"#))
            #expect(try await db.store.pushes.takeSendSlot(pushID: id) == nil)  // not throttled
            let fanout = try #require(try await db.store.pushes.claim(lease: 30_000)).job
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
        let clock = TestClock(EpochClock.system.now.epochMilliseconds)
        try await DeliveryWorld.run(backend, .init(batchSize: 500, workers: 4, clock: clock.epochClock)) { world, client in
            try await world.db.store.deliverySettings.save(AppDeliverySettings(ratePerSecond: 3), applicationID: world.fixture.app.id)
            for _ in 0..<7 { _ = try await world.register() }
            let receipt = try await world.send(#"{"message":{"body":"default"},"target":{"platform":"ios"}}"#, client)
            try await expectOneBatchPerSecond("default", counts: [3, 6, 7], clock, world)
            #expect(try await world.finished(receipt, client)["delivered"] as? Int == 7)
            #expect(try await batches(receipt, world).map(\.size) == [3, 3, 1])

            // A push's own rate wins over the app's: one batch, out at once.
            let fast = try await world.send(
                #"{"message":{"body":"own"},"target":{"platform":"ios"},"rate":{"per_second":100}}"#, client)
            _ = try await world.finished(fast, client)
            #expect(try await batches(fast, world).map(\.size) == [7])
        }
    }
}
