import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// An edit that changes some fields of a row and keeps the others reads the row, applies the
/// change and writes the row back. On PostgreSQL another edit of the same row may commit in
/// between: each edit must apply its change to the row as the other left it, never write back
/// what it read before (which silently undoes the other's accepted change).
///
/// Each test holds one edit uncommitted (as a plain UPDATE of one field), starts the
/// repository's edit of another field, lets the first commit, and expects both changes.
@Suite struct ConcurrentEditTests {
    @Test(.timeLimit(.minutes(2)))
    func aDeviceUpdateKeepsAConcurrentChange() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let device = try await db.store.devices.register(
                on: fixture.platform,
                try RegistrationInput(deviceAlias: .set("iPad"), registrationToken: randomAPNsToken()).validated(
                    for: .ios, requireToken: true))
            let change = try RegistrationInput(deviceModel: .set("iPad14,1")).validated(for: .ios, requireToken: false)
            let updated = try await race(db, "UPDATE devices SET device_alias = 'Kitchen iPad' WHERE id = \(device.id) RETURNING id") {
                try await db.store.devices.update(on: fixture.platform, uuid: device.uuid, change)
            }
            #expect(updated?.deviceAlias == "Kitchen iPad", "the answer shows the device as stored")
            let stored = try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: device.uuid))
            #expect(stored.deviceAlias == "Kitchen iPad")
            #expect(stored.deviceModel == "iPad14,1")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func anApplicationUpdateKeepsAConcurrentChange() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let app = try await Fixture.make(db.store).app
            let updated = try await race(db, "UPDATE applications SET name = 'Renamed' WHERE id = \(app.id) RETURNING id") {
                try await db.store.applications.update(id: app.id, name: nil, description: nil, includesReceiptID: false)
            }
            #expect(updated?.name == "Renamed")
            let stored = try #require(try await db.store.applications.find(id: app.id))
            #expect(stored.name == "Renamed")
            #expect(stored.includesReceiptID == false)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aPlatformUpdateKeepsAConcurrentChange() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let platform = try await Fixture.make(db.store, type: .android).platform
            let updated = try await race(db, "UPDATE platforms SET name = 'Renamed' WHERE id = \(platform.id) RETURNING id") {
                try await db.store.platforms.update(
                    id: platform.id, name: nil, credentials: nil, fcmNotification: !platform.fcmNotification)
            }
            #expect(updated?.name == "Renamed")
            let stored = try #require(try await db.store.platforms.find(id: platform.id))
            #expect(stored.name == "Renamed")
            #expect(stored.fcmNotification == !platform.fcmNotification)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aGeofenceUpdateKeepsAConcurrentChange() async throws {
        guard Backend.available.contains(.postgres) else { return }
        let clock = TestClock()
        try await withTestDatabase(.postgres, clock: clock.epochClock) { db async throws in
            let app = try await Fixture.make(db.store).app.id
            let office = try await db.store.locations.create(
                applicationID: app, LocationChanges(name: "Office", latitude: 49.28, longitude: -123.12, radius: 100))
            let policy = GeofenceUpdatePolicy()
            let geofence = try await db.store.geofences.create(
                applicationID: app,
                GeofenceChanges(
                    platform: .ios, triggerType: .enter, startTime: 0, expiryTime: clock.now + 86_400_000,
                    data: ["ios": .object(["alertBody": .string("hi")])], tags: [], locationIDs: [office.id]),
                notify: policy)
            let updated = try await race(db, "UPDATE geofences SET trigger_type = 'exit' WHERE id = \(geofence.id) RETURNING id") {
                try await db.store.geofences.update(id: geofence.id, applicationID: app, GeofenceChanges(tags: ["news"]), notify: policy)
            }
            #expect(updated?.definition.triggerType == .exit)
            let stored = try #require(try await db.store.geofences.find(id: geofence.id, applicationID: app))
            #expect(stored.definition.triggerType == .exit)
            #expect(stored.definition.tags == ["news"])
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aLocationUpdateKeepsAConcurrentChange() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let app = try await Fixture.make(db.store).app.id
            let office = try await db.store.locations.create(
                applicationID: app, LocationChanges(name: "Office", latitude: 49.28, longitude: -123.12, radius: 100))
            let updated = try await race(db, "UPDATE locations SET name = 'HQ' WHERE id = \(office.id) RETURNING id") {
                try await db.store.locations.update(
                    id: office.id, applicationID: app, LocationChanges(radius: 250), notify: GeofenceUpdatePolicy())
            }
            #expect(updated?.name == "HQ")
            let stored = try #require(try await db.store.locations.find(id: office.id, applicationID: app))
            #expect(stored.name == "HQ")
            #expect(stored.radius == 250)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aLocationGroupUpdateKeepsAConcurrentChange() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let app = try await Fixture.make(db.store).app.id
            let group = try await db.store.locationGroups.create(applicationID: app, LocationGroupChanges(name: "Shops", description: ""))
            let updated = try await race(db, "UPDATE location_groups SET name = 'Downtown' WHERE id = \(group.id) RETURNING id") {
                try await db.store.locationGroups.update(id: group.id, applicationID: app, LocationGroupChanges(description: "open late"))
            }
            #expect(updated?.name == "Downtown")
            let stored = try #require(try await db.store.locationGroups.find(id: group.id, applicationID: app))
            #expect(stored.name == "Downtown")
            #expect(stored.description == "open late")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aDeliverySettingsChangeKeepsAConcurrentChange() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let app = try await Fixture.make(db.store).app.id
            try await db.store.deliverySettings.save(AppDeliverySettings(defaultTimeZone: "Europe/Paris"), applicationID: app)
            let updated = try await race(
                db, "UPDATE app_delivery_settings SET default_time_zone = 'Asia/Tokyo' WHERE app_id = \(app) RETURNING app_id"
            ) {
                try await db.store.deliverySettings.update(applicationID: app) { $0.ratePerSecond = 50 }
            }
            #expect(updated == AppDeliverySettings(defaultTimeZone: "Asia/Tokyo", ratePerSecond: 50))
            #expect(
                try await db.store.deliverySettings.find(applicationID: app)
                    == AppDeliverySettings(defaultTimeZone: "Asia/Tokyo", ratePerSecond: 50))
        }
    }

    @Test(arguments: Backend.available)
    func aDeliverySettingsChangeThatThrowsWritesNothing(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let app = try await Fixture.make(db.store).app.id
            struct Refused: Error {}
            await #expect(throws: Refused.self) {
                try await db.store.deliverySettings.update(applicationID: app) { settings in
                    settings.ratePerSecond = 7
                    throw Refused()
                }
            }
            #expect(try await db.database.query("SELECT app_id FROM app_delivery_settings").isEmpty)
            #expect(
                try await db.store.deliverySettings.update(applicationID: app) { $0.ratePerSecond = 7 }
                    == AppDeliverySettings(ratePerSecond: 7))
        }
    }

    /// Holds `held` (an UPDATE … RETURNING of one row) uncommitted, runs `edit` meanwhile until it
    /// waits for the row or finishes, lets `held` commit and returns what `edit` returned.
    func race<Result: Sendable>(
        _ db: TestDatabase, _ held: SQL, _ edit: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let holder = await HeldTransaction.start(on: db.database) { connection in
            try await connection.query(held).count
        }
        let racer = Racer(edit)
        try await racer.waitUntilBlockedOrFinished(in: db)
        #expect(try await holder.commit() == 1)
        return try await racer.value
    }
}
