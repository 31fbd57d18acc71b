import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// Each geofence change widens the app's pending update push to the devices it concerns, in the
/// change's transaction: the audience is read, merged and written back. Two changes at once on
/// PostgreSQL must not each merge into what they read before the other committed, or the later
/// write drops the earlier change's devices, which then never hear of it.
@Suite struct GeofenceUpdateRaceTests {
    let policy = GeofenceUpdatePolicy(delay: 3_000, maximumDelay: 30_000)

    @Test(.timeLimit(.minutes(2)))
    func twoChangesAtOnceBothWidenThePendingPush() async throws {
        guard Backend.available.contains(.postgres) else { return }
        let clock = TestClock()
        try await withTestDatabase(.postgres, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let app = fixture.app.id
            let office = try await db.store.locations.create(
                applicationID: app, LocationChanges(name: "Office", latitude: 49.28, longitude: -123.12, radius: 100))
            // A first change leaves a push pending for the iOS devices subscribed to "news".
            _ = try await db.store.geofences.create(
                applicationID: app,
                GeofenceChanges(
                    platform: .ios, triggerType: .enter, startTime: 0, expiryTime: clock.now + 86_400_000,
                    data: ["ios": .object(["alertBody": .string("hi")])], tags: ["news"], locationIDs: [office.id]),
                notify: policy)
            clock.advance(1_000)
            let (policy, now) = (self.policy, clock.now)

            // A change for Android's "sports" devices merges into it and holds, uncommitted.
            let android = await HeldTransaction.start(on: db.database) { connection in
                try await GeofenceUpdateScheduler.schedule(
                    connection, applicationID: app, audience: GeofenceAudience(platforms: [.android], topics: ["sports"], everyone: false),
                    now: now, policy: policy)
            }
            // Meanwhile a change for iOS's "weather" devices.
            let weather = Racer {
                try await db.database.transaction { connection in
                    try await GeofenceUpdateScheduler.schedule(
                        connection, applicationID: app, audience: GeofenceAudience(platforms: [.ios], topics: ["weather"], everyone: false),
                        now: now, policy: policy)
                }
            }
            try await weather.waitUntilBlockedOrFinished(in: db)
            try await android.commit()
            try await weather.value

            // One push, pending, for the devices of all three changes.
            let rows = try await db.database.query(
                "SELECT push_id, first_change_at, platforms, topics, everyone FROM geofence_update_pushes")
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            let expected = GeofenceAudience(platforms: [.ios, .android], topics: ["news", "sports", "weather"], everyone: false)
            #expect(try GeofenceUpdateScheduler.audienceOf(row) == expected)
            let push = try #require(try await db.store.pushes.find(id: try row.uuid("push_id"), applicationID: app))
            #expect(push.request == AcceptedPush(GeofenceUpdatePush.push(for: expected)).storedText)
            #expect(try await db.database.query("SELECT id FROM pushes").count == 1)
        }
    }
}
