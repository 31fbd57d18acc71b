import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// The iOS badge counts Herald keeps (autobadge): a relative badge counts each device once per
/// push, whether its batch is retried, redelivered after a worker died, or sent by a worker whose
/// lease ran out.
@Suite struct BadgeCountTests {
    /// Registers `count` iOS devices, accepts `request` to them and runs its fan-out: one batch
    /// job waits. Returns the devices.
    func fannedOut(_ db: TestDatabase, _ fixture: Fixture, _ request: String, count: Int) async throws -> [Device] {
        var devices: [Device] = []
        for _ in 0..<count {
            devices.append(
                try await db.store.devices.register(
                    on: fixture.platform,
                    try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true)))
        }
        _ = try await db.store.pushes.create(applicationID: fixture.app.id, try .accepting(request))
        let fanout = try #require(try await db.store.pushes.claim(lease: 60_000)).job
        try await db.store.pushes.advance(fanout, page: devices.map(\.id), finished: true)
        return devices
    }

    func count(_ db: TestDatabase, _ fixture: Fixture, _ device: Device) async throws -> Int64? {
        try await db.store.devices.badge(applicationID: fixture.app.id, uuid: device.uuid)?.badge
    }

    @Test(arguments: Backend.available)
    func aBatchRedeliveredAfterItsLeaseSendsTheNumbersAlreadyCounted(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let request = #"{"message":{"custom":{"ios":{"badge":"+2"}}},"target":{"platform":"ios"}}"#
            let devices = try await fannedOut(db, fixture, request, count: 3)
            try await db.store.devices.setBadge(5, deviceID: devices[1].id)
            let ids = devices.map(\.id)

            // A worker counts the batch, then dies before sending.
            let stalled = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            let first = try await db.store.pushes.badges(for: stalled, adding: 2, deviceIDs: ids)
            #expect(first == [ids[0]: 2, ids[1]: 7, ids[2]: 2])

            // After its lease another worker takes the batch: the same numbers, counted once.
            clock.advance(60_001)
            let current = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(current.id == stalled.id)
            #expect(try await db.store.pushes.badges(for: current, adding: 2, deviceIDs: ids) == first)
            #expect(try await count(db, fixture, devices[0]) == 2)
            #expect(try await count(db, fixture, devices[1]) == 7)

            // The stalled worker, waking, counts nothing.
            let late = await #expect(throws: StoreError.self) { try await db.store.pushes.badges(for: stalled, adding: 2, deviceIDs: ids) }
            #expect(late?.reason == .leaseLost)

            // A retry of part of the batch (a new job, next attempt) sends the same numbers too.
            var result = BatchResult()
            result.delivered = 2
            result.retries = [clock.now: [ids[2]]]
            try await db.store.pushes.complete(current, result)
            let retry = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(retry.deviceIDs == [ids[2]])
            #expect(retry.attempt == 1)
            #expect(try await db.store.pushes.badges(for: retry, adding: 2, deviceIDs: [ids[2]]) == [ids[2]: 2])
            #expect(try await count(db, fixture, devices[2]) == 2)
            var last = BatchResult()
            last.delivered = 1
            try await db.store.pushes.complete(retry, last)
        }
    }

    @Test(arguments: Backend.available)
    func countsStayFromZeroToTheLimitAndANumberSetsThem(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let request = #"{"message":{"custom":{"ios":{"badge":"-3"}}},"target":{"platform":"ios"}}"#
            let devices = try await fannedOut(db, fixture, request, count: 2)
            try await db.store.devices.setBadge(BadgeChange.limit, deviceID: devices[1].id)
            // A device deleted since its batch was written is left out.
            let gone = try await db.store.devices.register(
                on: fixture.platform, try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true))
            #expect(try await db.store.devices.delete(platformID: fixture.platform.id, uuid: gone.uuid))
            let job = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            let badges = try await db.store.pushes.badges(for: job, adding: -3, deviceIDs: devices.map(\.id) + [gone.id])
            #expect(badges == [devices[0].id: 0, devices[1].id: BadgeChange.limit - 3])

            try await db.store.pushes.setBadges(4, deviceIDs: devices.map(\.id))
            #expect(try await count(db, fixture, devices[0]) == 4)
            #expect(try await count(db, fixture, devices[1]) == 4)

            var result = BatchResult()
            result.delivered = 2
            try await db.store.pushes.complete(job, result)
        }
    }
}
