import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// An expired topic's name used again is a new topic: the transaction that renews it removes the
/// old row and its subscriptions first. Two transactions renewing it at once on PostgreSQL must
/// not both remove subscriptions: the second, having waited for the first, would take away the
/// subscriptions the first had just written (an accepted registration's tags lost).
@Suite struct TopicRenewalRaceTests {
    @Test(.timeLimit(.minutes(2)))
    func aSecondRenewalKeepsTheSubscriptionsTheFirstWrote() async throws {
        guard Backend.available.contains(.postgres) else { return }
        let clock = TestClock()
        try await withTestDatabase(.postgres, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let app = fixture.app.id
            // "news" had a subscriber, then was deleted (it expired).
            _ = try await register(db, fixture, tags: ["news"])
            let news = try #require(
                try await db.store.topics.list(applicationID: app, query: "news", hasExpiry: nil, page: 1, size: 1).topics.first)
            #expect(try await db.store.topics.delete(applicationID: app, ids: [news.id]) == 1)
            let fresh = try await register(db, fixture, tags: [])

            // A registration subscribes a device to "news" again (renewing the topic) and holds.
            let time = clock.now
            let renewal = await HeldTransaction.start(on: db.database) { connection in
                try await DeviceRepository.subscribe(
                    [DeviceTagRow(deviceID: fresh.id, applicationID: app, tag: "news")], time: time, on: connection)
            }
            // Meanwhile the app creates the topic "news".
            let creation = Racer { try await db.store.topics.create(applicationID: app, [TopicRequest(name: "news", expiresAt: nil)]) }
            try await creation.waitUntilBlockedOrFinished(in: db)
            try await renewal.commit()
            let created = try await creation.value
            #expect(created.map(\.created) == [false], "the topic the registration renewed is the app's")

            // The device the registration subscribed is the topic's one subscriber.
            #expect(try await db.store.topics.subscriberCounts(applicationID: app, names: ["news"]) == ["news": 1])
            let device = try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: fresh.uuid))
            #expect(device.tags == ["news"])
        }
    }

    func register(_ db: TestDatabase, _ fixture: Fixture, tags: [String]) async throws -> Device {
        try await db.store.devices.register(
            on: fixture.platform,
            try RegistrationInput(registrationToken: randomAPNsToken(), tags: .replace(tags)).validated(for: .ios, requireToken: true))
    }
}
