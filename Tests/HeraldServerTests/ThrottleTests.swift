import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Testing

/// `rate.per_second` on a push, and an app's default rate: batches of at most the rate, each
/// claimable a second after the one before, through the workers to the mock APNs.
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

    /// Arrival times at the mock (ns) that fall within one second of each other, at most.
    func busiestSecond(_ world: DeliveryWorld) -> Int {
        let arrivals = world.mock.arrivalTimes.sorted()
        var busiest = 0
        var start = 0
        for end in arrivals.indices {
            while arrivals[end] - arrivals[start] >= 1_000_000_000 { start += 1 }
            busiest = max(busiest, end - start + 1)
        }
        return busiest
    }

    @Test(arguments: Backend.available)
    func aPushWithARateIsSentInBatchesOfAtMostTheRateASecondApart(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(batchSize: 500, workers: 4)) { world, client in
            for _ in 0..<6 { _ = try await world.register() }
            let receipt = try await world.send(
                #"{"message":{"body":"slowly"},"target":{"platform":"ios"},"rate":{"per_second":2}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["delivered"] as? Int == 6)
            let jobs = try await batches(receipt, world)
            #expect(jobs.map(\.size) == [2, 2, 2])
            #expect(zip(jobs, jobs.dropFirst()).allSatisfy { $1.availableAt - $0.availableAt == 1000 })
            #expect(world.mock.arrivalTimes.count == 6)
            // Measured at the mock: three seconds' worth, never all at once. (A worker that wakes
            // late can bring two batches closer than a second, so the bound is loose.)
            let arrivals = world.mock.arrivalTimes.sorted()
            #expect(arrivals[5] - arrivals[0] >= 1_500_000_000)
            #expect(busiestSecond(world) <= 4)
        }
    }

    @Test(arguments: Backend.available)
    func theAppsDefaultRateAppliesToPushesWithoutTheirOwn(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, .init(batchSize: 500, workers: 4)) { world, client in
            try await world.db.store.deliverySettings.save(AppDeliverySettings(ratePerSecond: 3), applicationID: world.fixture.app.id)
            for _ in 0..<7 { _ = try await world.register() }
            let receipt = try await world.send(#"{"message":{"body":"default"},"target":{"platform":"ios"}}"#, client)
            #expect(try await world.finished(receipt, client)["delivered"] as? Int == 7)
            let jobs = try await batches(receipt, world)
            #expect(jobs.map(\.size) == [3, 3, 1])
            #expect(zip(jobs, jobs.dropFirst()).allSatisfy { $1.availableAt - $0.availableAt == 1000 })

            // A push's own rate wins over the app's.
            let fast = try await world.send(
                #"{"message":{"body":"own"},"target":{"platform":"ios"},"rate":{"per_second":100}}"#, client)
            _ = try await world.finished(fast, client)
            #expect(try await batches(fast, world).map(\.size) == [7])
        }
    }
}
