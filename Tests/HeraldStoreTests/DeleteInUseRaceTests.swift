import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// A delete refused while something uses the row (a location a live geofence monitors, a
/// platform with devices) checks for users and then deletes. On PostgreSQL a user being added at
/// that moment is not yet visible to the check: the delete must wait for it and refuse, not
/// remove the geofence's location with the cascade or fail on the foreign key.
@Suite struct DeleteInUseRaceTests {
    @Test(.timeLimit(.minutes(2)))
    func aLocationAGeofenceTakesMeanwhileIsInUse() async throws {
        guard Backend.available.contains(.postgres) else { return }
        let clock = TestClock()
        try await withTestDatabase(.postgres, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let app = fixture.app.id
            let office = try await db.store.locations.create(
                applicationID: app, LocationChanges(name: "Office", latitude: 49.28, longitude: -123.12, radius: 100))
            let definition = try GeofenceChanges(
                platform: .ios, triggerType: .enter, startTime: 0, expiryTime: clock.now + 86_400_000,
                data: ["ios": .object(["alertBody": .string("hi")])], tags: [], locationIDs: [office.id]
            ).definition(now: clock.now)
            let now = clock.now

            // A geofence on the location is being created, uncommitted (as `create` writes it).
            let creation = await HeldTransaction.start(on: db.database) { connection -> Int64 in
                try await LocationRepository.requireExisting(connection, ids: [office.id], applicationID: app, field: "locations")
                let rows = try await connection.query(
                    """
                    INSERT INTO geofences (app_id, platform, trigger_type, start_time, expiry_time, data, created_at, updated_at)
                    VALUES (\(app), 'ios', 'enter', 0, \(definition.expiryTime), \(JSONValue.object(definition.data).jsonText), \(now), \(now))
                    RETURNING id
                    """)
                let id = try rows.first?.int("id") ?? 0
                try await GeofenceRepository.insertParts(connection, id: id, definition)
                return id
            }
            let deletion = Racer { try await db.store.locations.delete(id: office.id, applicationID: app) }
            try await deletion.waitUntilBlockedOrFinished(in: db)
            let geofenceID = try await creation.commit()

            #expect(try await deletion.value == .inUse(geofenceIDs: [geofenceID]))
            let geofence = try #require(try await db.store.geofences.find(id: geofenceID, applicationID: app))
            #expect(geofence.locations.map(\.id) == [office.id])
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aPlatformADeviceRegistersOnMeanwhileIsInUse() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let platform = fixture.platform
            let registration = try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true)
            let token = try #require(registration.registrationToken)

            // A device registers on the platform, uncommitted.
            let registering = await HeldTransaction.start(on: db.database) { connection in
                let request = RegistrationBatcher.Request(
                    platform: platform, token: token, registration: registration, tags: [], time: 0, candidate: UUID(),
                    complete: { _ in })
                return try await RegistrationBatcher.write([request], on: connection)[0]
            }
            let deletion = Racer { try await db.store.platforms.delete(id: platform.id) }
            try await deletion.waitUntilBlockedOrFinished(in: db)
            let device = try await registering.commit()

            #expect(try await deletion.value == .inUse)
            #expect(try await db.store.devices.find(platformID: platform.id, uuid: device.uuid) != nil)
        }
    }
}
