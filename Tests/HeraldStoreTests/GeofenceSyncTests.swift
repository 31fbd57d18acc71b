import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// What devices fetch from `GET /v1/geofences`, on an injected clock.
@Suite struct GeofenceSyncTests {
    let policy = GeofenceUpdatePolicy(delay: 3_000, maximumDelay: 30_000)

    struct World {
        let db: TestDatabase
        let fixture: Fixture
        let clock: TestClock
        let office: Location
        let cafe: Location

        var store: Store { db.store }

        func device(tags: [String] = []) async throws -> Device {
            try await store.devices.register(
                on: fixture.platform,
                try RegistrationInput(registrationToken: randomAPNsToken(), tags: .replace(tags)).validated(for: .ios, requireToken: true))
        }

        func geofence(
            _ platform: GeofencePlatform = .ios, tags: [String] = [], start: Int64 = 0, expiresIn: Int64 = 86_400_000,
            locations: [Location]? = nil, policy: GeofenceUpdatePolicy
        ) async throws -> Geofence {
            try await store.geofences.create(
                applicationID: fixture.app.id,
                GeofenceChanges(
                    platform: platform, triggerType: .enter, startTime: start, expiryTime: clock.now + expiresIn,
                    data: ["ios": .object(["alertBody": .string("hi")]), "android": .object(["message": .string("hi")])],
                    tags: tags, locationIDs: (locations ?? [office]).map(\.id)),
                notify: policy)
        }

        func sync(_ device: Device, since: Int64) async throws -> GeofenceSyncResult {
            // The device as stored now (its tags and registration time).
            let current = try #require(try await store.devices.find(platformID: fixture.platform.id, uuid: device.uuid))
            return try await store.geofences.sync(device: current, since: since)
        }
    }

    func withWorld(_ backend: Backend, _ body: (World) async throws -> Void) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db in
            let fixture = try await Fixture.make(db.store)
            let office = try await db.store.locations.create(
                applicationID: fixture.app.id, LocationChanges(name: "Office", latitude: 49.28, longitude: -123.12, radius: 100))
            let cafe = try await db.store.locations.create(
                applicationID: fixture.app.id, LocationChanges(name: "Cafe", latitude: 49.29, longitude: -123.13, radius: 50))
            try await body(World(db: db, fixture: fixture, clock: clock, office: office, cafe: cafe))
        }
    }

    @Test(arguments: Backend.available)
    func aFirstFetchGetsEveryLiveGeofenceForTheDevice(_ backend: Backend) async throws {
        try await withWorld(backend) { world in
            let device = try await world.device(tags: ["news"])
            let untagged = try await world.geofence(policy: policy)
            let forNews = try await world.geofence(.all, tags: ["news", "local"], policy: policy)
            _ = try await world.geofence(.android, policy: policy)
            _ = try await world.geofence(.ios, tags: ["sports"], policy: policy)
            _ = try await world.geofence(.ios, start: world.clock.now + 60_000, policy: policy)
            let both = try await world.geofence(.ios, locations: [world.office, world.cafe], policy: policy)

            let result = try await world.sync(device, since: 0)
            #expect(result.geofences.map(\.id) == [untagged.id, forNews.id, both.id])
            #expect(result.deletedIDs.isEmpty)
            #expect(result.lastModified == world.clock.now - GeofenceRepository.syncOverlap)
            #expect(result.geofences.last?.locations.map(\.name) == ["Office", "Cafe"])
            #expect(result.geofences[1].definition.tags == ["local", "news"])
        }
    }

    @Test(arguments: Backend.available)
    func laterFetchesGetChangesDeletionsExpiriesAndStarts(_ backend: Backend) async throws {
        try await withWorld(backend) { world in
            let device = try await world.device(tags: ["news"])
            let kept = try await world.geofence(policy: policy)
            let retagged = try await world.geofence(policy: policy)
            let deleted = try await world.geofence(policy: policy)
            let expiring = try await world.geofence(expiresIn: 35_000, policy: policy)
            let starting = try await world.geofence(start: world.clock.now + 40_000, policy: policy)
            world.clock.advance(10_000)
            let first = try await world.sync(device, since: 0)
            #expect(Set(first.geofences.map(\.id)) == [kept.id, retagged.id, deleted.id, expiring.id])

            // Changes: one moves away from the device's tags, one is deleted, one is added.
            world.clock.advance(10_000)
            _ = try await world.store.geofences.update(
                id: retagged.id, applicationID: world.fixture.app.id, GeofenceChanges(tags: ["sports"]), notify: policy)
            #expect(try await world.store.geofences.delete(id: deleted.id, applicationID: world.fixture.app.id, notify: policy))
            let added = try await world.geofence(.all, tags: ["news"], policy: policy)
            world.clock.advance(10_000)
            let second = try await world.sync(device, since: first.lastModified)
            #expect(second.geofences.map(\.id) == [added.id])
            #expect(second.deletedIDs == [retagged.id, deleted.id])

            // Time passes: one expires, one starts.
            world.clock.advance(20_000)
            let third = try await world.sync(device, since: second.lastModified)
            #expect(third.geofences.map(\.id) == [starting.id])
            #expect(third.deletedIDs == [expiring.id])

            // Nothing new: nothing answered, and the timestamp does not go backwards.
            world.clock.advance(10_000)
            let fourth = try await world.sync(device, since: third.lastModified)
            #expect(fourth.geofences.isEmpty && fourth.deletedIDs.isEmpty)
            #expect(fourth.lastModified >= third.lastModified)
            // An update that changes nothing is not a change.
            world.clock.advance(10_000)
            _ = try await world.store.geofences.update(
                id: kept.id, applicationID: world.fixture.app.id, GeofenceChanges(tags: [], locationIDs: [world.office.id]),
                notify: policy)
            world.clock.advance(10_000)
            let fifth = try await world.sync(device, since: fourth.lastModified)
            #expect(fifth.geofences.isEmpty && fifth.deletedIDs.isEmpty)
            // A deleted geofence is gone from the API too.
            #expect(try await world.store.geofences.find(id: deleted.id, applicationID: world.fixture.app.id) == nil)
        }
    }

    @Test(arguments: Backend.available)
    func aDeviceWhoseTagsChangedGetsItsGeofencesAgain(_ backend: Backend) async throws {
        try await withWorld(backend) { world in
            let device = try await world.device(tags: ["news"])
            let news = try await world.geofence(tags: ["news"], policy: policy)
            let sports = try await world.geofence(tags: ["sports"], policy: policy)
            world.clock.advance(10_000)
            let first = try await world.sync(device, since: 0)
            #expect(first.geofences.map(\.id) == [news.id])

            // The device swaps news for sports; neither geofence changed.
            world.clock.advance(10_000)
            _ = try await world.store.devices.update(
                on: world.fixture.platform, uuid: device.uuid,
                try RegistrationInput(tags: .replace(["sports"])).validated(for: .ios, requireToken: false))
            world.clock.advance(10_000)
            let second = try await world.sync(device, since: first.lastModified)
            #expect(second.geofences.map(\.id) == [sports.id])
            #expect(second.deletedIDs == [news.id])
        }
    }

    @Test(arguments: Backend.available)
    func aBurstOfEditsMakesOnePendingPushDueAfterTheLastEdit(_ backend: Backend) async throws {
        try await withWorld(backend) { world in
            let start = world.clock.now
            let fence = try await world.geofence(tags: ["news"], policy: policy)
            world.clock.advance(2_000)
            _ = try await world.geofence(.android, policy: policy)
            world.clock.advance(2_000)
            _ = try await world.store.geofences.update(
                id: fence.id, applicationID: world.fixture.app.id, GeofenceChanges(tags: ["local"]), notify: policy)
            #expect(try await pushCount(world) == 1)

            // Not due until the delay after the last edit.
            world.clock.set(start + 4_000 + policy.delay - 1)
            #expect(try await world.store.pushes.claim(lease: 60_000) == nil)
            world.clock.set(start + 4_000 + policy.delay)
            let claimed = try #require(try await world.store.pushes.claim(lease: 60_000))
            let (job, push) = (claimed.job, claimed.push)
            #expect(job.kind == .fanout)
            let input = try push.accepted().push
            // The untagged Android geofence widens the audience to every device of both platforms.
            #expect(input.audience == .selection(platforms: [.ios, .android], topics: [], customUserIDs: [], interactiveOnly: false))

            // Once it is being sent, the next edit makes a new push.
            _ = try await world.store.geofences.delete(id: fence.id, applicationID: world.fixture.app.id, notify: policy)
            #expect(try await pushCount(world) == 2)
        }
    }

    @Test(arguments: Backend.available)
    func editsThatNeverStopStillGoOutAfterTheMaximumDelay(_ backend: Backend) async throws {
        try await withWorld(backend) { world in
            let start = world.clock.now
            let fence = try await world.geofence(tags: ["a"], policy: policy)
            for step in 1...20 {
                world.clock.advance(2_000)
                _ = try await world.store.geofences.update(
                    id: fence.id, applicationID: world.fixture.app.id, GeofenceChanges(tags: ["t\(step)"]), notify: policy)
                if world.clock.now >= start + policy.maximumDelay { break }
            }
            #expect(try await pushCount(world) == 1)
            world.clock.set(start + policy.maximumDelay)
            let push = try #require(try await world.store.pushes.claim(lease: 60_000)).push
            let input = try push.accepted().push
            guard case .selection(_, let topics, _, _) = input.audience else {
                Issue.record("not a selection")
                return
            }
            // Every tag the geofence had during the burst: its devices of every moment are told.
            #expect(topics.count == 16 && topics.contains("a") && topics.contains("t15"))
        }
    }

    @Test(arguments: Backend.available)
    func aGeofenceStartingLaterIsPushedWhenItStarts(_ backend: Backend) async throws {
        try await withWorld(backend) { world in
            let startsAt = world.clock.now + 3_600_000
            _ = try await world.geofence(start: startsAt, policy: policy)
            _ = try await world.geofence(tags: ["x"], start: startsAt, policy: policy)
            #expect(try await pushCount(world) == 1)
            world.clock.advance(policy.maximumDelay)
            #expect(try await world.store.pushes.claim(lease: 60_000) == nil)
            world.clock.set(startsAt)
            #expect(try await world.store.pushes.claim(lease: 60_000) != nil)
        }
    }

    @Test(arguments: Backend.available)
    func aLocationInUseCannotBeDeletedAndMovingItChangesItsGeofences(_ backend: Backend) async throws {
        try await withWorld(backend) { world in
            let app = world.fixture.app.id
            let fence = try await world.geofence(locations: [world.office, world.cafe], policy: policy)
            let expired = try await world.geofence(expiresIn: 1_000, locations: [world.cafe], policy: policy)
            let group = try await world.store.locationGroups.create(
                applicationID: app, LocationGroupChanges(name: "All", description: "", locationIDs: [world.cafe.id, world.office.id]))
            #expect(group.locations.map(\.id) == [world.cafe.id, world.office.id])
            world.clock.advance(10_000)
            // Only geofences that have not expired hold on to their locations.
            #expect(try await world.store.locations.delete(id: world.cafe.id, applicationID: app) == .inUse(geofenceIDs: [fence.id]))

            let moved = try await world.store.locations.update(
                id: world.office.id, applicationID: app, LocationChanges(radius: 250), notify: policy)
            #expect(moved?.radius == 250)
            let changed = try #require(try await world.store.geofences.find(id: fence.id, applicationID: app))
            #expect(changed.updatedAt == world.clock.now)
            #expect(changed.locations.first?.radius == 250)

            // Once its geofence is gone, the location goes (and leaves the expired one and the group).
            _ = try await world.store.geofences.delete(id: fence.id, applicationID: app, notify: policy)
            #expect(try await world.store.locations.delete(id: world.cafe.id, applicationID: app) == .deleted)
            #expect(try await world.store.locationGroups.find(id: group.id, applicationID: app)?.locations.map(\.id) == [world.office.id])
            #expect(try await world.store.geofences.find(id: expired.id, applicationID: app)?.locations.isEmpty == true)
        }
    }

    func pushCount(_ world: World) async throws -> Int {
        Int(try await world.db.database.query("SELECT COUNT(*) AS n FROM pushes").first?.int("n") ?? 0)
    }
}
