import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// Topics in the store: created explicitly and by registration, expiry, deletion, cleanup, the
/// audience of a push to topics, and migration 6's backfill of existing tags.
@Suite struct TopicRepositoryTests {
    func register(_ db: TestDatabase, _ fixture: Fixture, tags: [String], customUserID: String? = nil) async throws -> Device {
        try await db.store.devices.register(
            on: fixture.platform,
            try RegistrationInput(
                registrationToken: randomAPNsToken(), customUserID: customUserID.map { .set($0) } ?? .unchanged, tags: .replace(tags)
            ).validated(for: .ios, requireToken: true))
    }

    func push(_ target: String, now: Int64) throws -> Push {
        try JSONDecoder().decode(PushInput.self, from: Data(#"{"message":{"body":"hi"},"target":\#(target)}"#.utf8))
            .validated(now: now)
    }

    /// Every device the push reaches, read page by page as the fan-out does.
    func audience(_ db: TestDatabase, _ push: Push, _ app: UUID, limit: Int = 3) async throws -> [Int64] {
        var cursor: Int64 = 0
        var ids: [Int64] = []
        while true {
            let page = try await db.store.pushes.audiencePage(of: push, applicationID: app, after: cursor, limit: limit)
            ids += page.deviceIDs
            if page.exhausted { return ids }
            #expect(page.cursor > cursor)
            cursor = page.cursor
        }
    }

    @Test(arguments: Backend.available)
    func registrationCreatesTopicsThatNeverExpire(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            _ = try await register(db, fixture, tags: ["News", "sports"])
            let device = try await register(db, fixture, tags: ["news"])
            _ = try await db.store.devices.update(
                on: fixture.platform, uuid: device.uuid,
                Registration(
                    os: nil, registrationToken: nil, osVersion: .unchanged, deviceAlias: .unchanged, deviceModel: .unchanged,
                    deviceManufacturer: .unchanged, customUserID: .unchanged, tags: .delta(subscribe: ["weather"], unsubscribe: [])))
            let (topics, total) = try await db.store.topics.list(
                applicationID: fixture.app.id, query: nil, hasExpiry: nil, page: 1, size: 50)
            #expect(total == 3)
            #expect(topics.map(\.name) == ["news", "sports", "weather"])
            #expect(topics.allSatisfy { $0.expiresAt == nil && $0.createdAt == clock.now })
        }
    }

    @Test(arguments: Backend.available)
    func creatingAnExistingTopicReturnsItUnchanged(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let first = try await db.store.topics.create(
                applicationID: fixture.app.id, [TopicRequest(name: "flash", expiresAt: clock.now + 120_000)])
            #expect(first.map { $0.created } == [true])
            let again = try await db.store.topics.create(
                applicationID: fixture.app.id,
                [
                    TopicRequest(name: "flash", expiresAt: nil), TopicRequest(name: "new", expiresAt: nil),
                    TopicRequest(name: "flash", expiresAt: nil),
                ])
            #expect(again.map { $0.created } == [false, true])
            #expect(again.first?.topic == first.first?.topic)
            #expect(again.first?.topic.expiresAt == clock.now + 120_000)
        }
    }

    @Test(arguments: Backend.available)
    func anExpiredTopicIsNotListedNotTargetedAndItsSubscriptionsAreCleanedUp(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            _ = try await db.store.topics.create(applicationID: fixture.app.id, [TopicRequest(name: "sale", expiresAt: clock.now + 60_000)])
            let subscriber = try await register(db, fixture, tags: ["sale", "news"])
            let reader = try await register(db, fixture, tags: ["news"])
            let toSale = try push(#"{"topics":["sale"]}"#, now: clock.now)
            #expect(try await audience(db, toSale, fixture.app.id) == [subscriber.id])
            #expect(
                try await db.store.topics.subscribed(applicationID: fixture.app.id, names: ["sale", "news", "nope"]) == ["sale", "news"])

            clock.advance(60_000)
            #expect(try await audience(db, toSale, fixture.app.id).isEmpty)
            let both = try push(#"{"topics":["sale","news"]}"#, now: clock.now)
            #expect(try await audience(db, both, fixture.app.id) == [subscriber.id, reader.id].sorted())
            #expect(try await db.store.topics.subscribed(applicationID: fixture.app.id, names: ["sale", "news"]) == ["news"])
            let listed = try await db.store.topics.list(applicationID: fixture.app.id, query: nil, hasExpiry: nil, page: 1, size: 50)
            #expect(listed.topics.map(\.name) == ["news"])

            // The cleanup removes its subscription, in chunks, then the topic; "news" stays.
            let cleanup = try await db.store.topics.removeExpired(chunk: 1)
            #expect(cleanup == TopicRepository.Cleanup(subscriptions: 1, topics: 1))
            #expect(try await db.store.devices.find(platformID: fixture.platform.id, uuid: subscriber.uuid)?.tags == ["news"])
            #expect(try await db.store.topics.removeExpired() == TopicRepository.Cleanup())
        }
    }

    @Test(arguments: Backend.available)
    func subscribingToAnExpiredTopicStartsANewOneWithoutTheOldSubscribers(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let old = try await db.store.topics.create(
                applicationID: fixture.app.id, [TopicRequest(name: "live", expiresAt: clock.now + 60_000)])
            let before = try await register(db, fixture, tags: ["live"])
            clock.advance(60_001)
            // Not cleaned up yet: the new subscriber's registration takes the name over.
            let after = try await register(db, fixture, tags: ["live"])
            let toLive = try push(#"{"topics":["live"]}"#, now: clock.now)
            #expect(try await audience(db, toLive, fixture.app.id) == [after.id])
            #expect(try await db.store.devices.find(platformID: fixture.platform.id, uuid: before.uuid)?.tags == [])
            let listed = try await db.store.topics.list(applicationID: fixture.app.id, query: "liv", hasExpiry: false, page: 1, size: 50)
            #expect(listed.topics.count == 1)
            #expect(listed.topics.first?.id != old.first?.topic.id)
        }
    }

    @Test(arguments: Backend.available)
    func deletingExpiresAtOnceAndOnlyWithinTheApplication(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let mine = try await Fixture.make(db.store)
            let theirs = try await Fixture.make(db.store)
            let device = try await register(db, mine, tags: ["alerts"])
            let created = try await db.store.topics.create(applicationID: mine.app.id, [TopicRequest(name: "alerts", expiresAt: nil)])
            let id = try #require(created.first?.topic.id)
            #expect(created.first?.created == false)

            #expect(try await db.store.topics.delete(applicationID: theirs.app.id, ids: [id]) == 0)
            #expect(try await db.store.topics.find(applicationID: mine.app.id, id: id) != nil)
            #expect(try await db.store.topics.find(applicationID: theirs.app.id, id: id) == nil)

            #expect(try await db.store.topics.delete(applicationID: mine.app.id, ids: [id, id + 1000]) == 1)
            #expect(try await db.store.topics.find(applicationID: mine.app.id, id: id) == nil)
            #expect(try await db.store.topics.delete(applicationID: mine.app.id, ids: [id]) == 0)
            let toAlerts = try push(#"{"topics":["alerts"]}"#, now: clock.now)
            #expect(try await audience(db, toAlerts, mine.app.id).isEmpty)
            #expect(try await db.store.topics.removeExpired() == TopicRepository.Cleanup(subscriptions: 1, topics: 1))
            #expect(try await db.store.devices.find(platformID: mine.platform.id, uuid: device.uuid)?.tags == [])
        }
    }

    @Test(arguments: Backend.available)
    func listingFiltersByTextAndExpiryAndPages(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let other = try await Fixture.make(db.store)
            let requests =
                (1...5).map { TopicRequest(name: "team-\($0)", expiresAt: $0 % 2 == 0 ? clock.now + 3_600_000 : nil) }
                + [TopicRequest(name: "100%_sure", expiresAt: nil)]
            _ = try await db.store.topics.create(applicationID: fixture.app.id, requests)
            _ = try await db.store.topics.create(applicationID: other.app.id, [TopicRequest(name: "team-9", expiresAt: nil)])

            let all = try await db.store.topics.list(applicationID: fixture.app.id, query: nil, hasExpiry: nil, page: 2, size: 4)
            #expect(all.total == 6)
            #expect(all.topics.map(\.name) == ["team-4", "team-5"])
            let team = try await db.store.topics.list(applicationID: fixture.app.id, query: "TEAM", hasExpiry: true, page: 1, size: 50)
            #expect(team.topics.map(\.name) == ["team-2", "team-4"])
            let never = try await db.store.topics.list(applicationID: fixture.app.id, query: "team", hasExpiry: false, page: 1, size: 50)
            #expect(never.total == 3)
            // LIKE's wildcards in q are taken literally.
            let literal = try await db.store.topics.list(applicationID: fixture.app.id, query: "0%_", hasExpiry: nil, page: 1, size: 50)
            #expect(literal.topics.map(\.name) == ["100%_sure"])
        }
    }

    /// Topics and custom user ids together reach the union, each device once, across pages, and
    /// the platform and activity filters still apply.
    @Test(arguments: Backend.available)
    func topicsAndCustomUserIDsReachTheUnionOnce(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let other = try await Fixture.make(db.store)
            let a = try await register(db, fixture, tags: ["red", "blue"])
            let b = try await register(db, fixture, tags: ["blue"], customUserID: "ann")
            let c = try await register(db, fixture, tags: [], customUserID: "ann")
            let d = try await register(db, fixture, tags: [], customUserID: "bob")
            _ = try await register(db, fixture, tags: ["green"])
            let e = try await register(db, fixture, tags: ["red"])
            _ = try await register(db, other, tags: ["red"], customUserID: "ann")
            _ = try await db.store.topics.create(
                applicationID: fixture.app.id, [TopicRequest(name: "brief", expiresAt: clock.now + 60_000)])
            let f = try await register(db, fixture, tags: ["brief"])

            let target = #"{"topics":["red","blue","brief"],"custom_user_ids":["ann","bob"]}"#
            for limit in [1, 2, 3, 100] {
                let ids = try await audience(db, try push(target, now: clock.now), fixture.app.id, limit: limit)
                #expect(ids == [a.id, b.id, c.id, d.id, e.id, f.id], "limit \(limit)")
            }
            // Once "brief" expires, f is no longer reached; the others still are.
            clock.advance(60_000)
            #expect(try await audience(db, try push(target, now: clock.now), fixture.app.id, limit: 2) == [a.id, b.id, c.id, d.id, e.id])
            // Platform filters apply to the union.
            #expect(
                try await audience(db, try push(#"{"topics":["red"],"platforms":["android"]}"#, now: clock.now), fixture.app.id).isEmpty)
        }
    }

    /// Migration 6 turns every tag in use into a topic that never expires, per application.
    @Test(arguments: Backend.available)
    func migrationSixBackfillsTopicsFromTags(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let first = try await register(db, fixture, tags: ["alpha", "beta"])
            _ = try await register(db, fixture, tags: ["beta"])
            // Back to schema 5: no topics table, no verification column.
            try await db.database.query("DROP TABLE topics")
            try await db.database.query("ALTER TABLE applications DROP COLUMN verify_custom_user_id")
            try await db.database.query("DELETE FROM herald_migrations WHERE version = 6")

            #expect(try await db.store.migrator.migrate() == [6])
            let (topics, _) = try await db.store.topics.list(applicationID: fixture.app.id, query: nil, hasExpiry: nil, page: 1, size: 50)
            #expect(topics.map(\.name) == ["alpha", "beta"])
            #expect(topics.allSatisfy { $0.expiresAt == nil && $0.createdAt == first.createdAt })
            // Applications that existed keep accepting plain custom user ids; new ones verify them.
            #expect(try await db.store.applications.find(id: fixture.app.id)?.verifiesCustomUserID == false)
            let (created, _) = try await db.store.applications.create(tenantID: fixture.app.tenantID, name: "new", description: "")
            #expect(try await db.store.applications.find(id: created.id)?.verifiesCustomUserID == true)
        }
    }

    @Test(arguments: Backend.available)
    func customUserIDsAreListedOncePerApplicationAndSearchedExactly(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let other = try await Fixture.make(db.store)
            _ = try await register(db, fixture, tags: [], customUserID: "custom-user-id1")
            _ = try await register(db, fixture, tags: [], customUserID: "custom-user-id1")
            _ = try await register(db, fixture, tags: [], customUserID: "Custom-User-ID2")
            _ = try await register(db, fixture, tags: [])
            _ = try await register(db, other, tags: [], customUserID: "someone-else")
            #expect(
                try await db.store.devices.customUserIDs(applicationID: fixture.app.id, containing: nil).sorted()
                    == ["Custom-User-ID2", "custom-user-id1"])
            #expect(try await db.store.devices.customUserIDs(applicationID: fixture.app.id, containing: "id1") == ["custom-user-id1"])
            #expect(try await db.store.devices.customUserIDs(applicationID: fixture.app.id, containing: "ID") == ["Custom-User-ID2"])
            #expect(try await db.store.devices.customUserIDs(applicationID: fixture.app.id, containing: "%").isEmpty)
        }
    }
}
