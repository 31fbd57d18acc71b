import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// `DeviceRepository.importDevices` writes a chunk's columns as arrays on PostgreSQL and as
/// multi-row statements on SQLite: text that array syntax or SQL treats specially must come back
/// as it went in, and the rules (no device moved, tags replaced) hold on both.
@Suite struct DeviceImportTests {
    static let awkward = [
        #"a "quoted" alias"#, #"back\slash \\ and \""#, "{braces},commas", "NULL", "null", "", " spaced ", "ünï 日本 🎉", "line\nbreak\ttab",
    ]

    func device(_ uuid: UUID, _ platform: Platform, token: String, alias: String?, tags: [String], active: Bool = true) throws
        -> DeviceImport
    {
        let registration = try RegistrationInput(
            os: "android-fcm", deviceAlias: alias.map { $0.isEmpty ? .clear : .set($0) } ?? .unchanged, registrationToken: token,
            customUserID: alias.map { $0.isEmpty ? .clear : .set($0) } ?? .unchanged, tags: .replace(tags)
        ).validated(for: .android, requireToken: true)
        return DeviceImport(uuid: uuid, platform: platform, registration: registration, active: active, createdAt: 1_000, updatedAt: 2_000)
    }

    @Test(arguments: Backend.available)
    func awkwardTextComesBackAsItWentIn(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store, type: .android)
            var devices: [DeviceImport] = []
            for (index, text) in Self.awkward.enumerated() {
                devices.append(
                    try device(
                        UUID(), fixture.platform, token: "token-\(index)", alias: text, tags: text.isEmpty ? [] : [text, "t\(index)"]))
            }
            devices.append(try device(UUID(), fixture.platform, token: "token-nil", alias: nil, tags: [], active: false))
            let outcomes = try await db.store.devices.importDevices(devices, applicationID: fixture.app.id)
            #expect(outcomes == Array(repeating: .imported, count: devices.count))
            for device in devices {
                let stored = try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: device.uuid))
                #expect(stored.deviceAlias == device.registration.deviceAlias.applied(to: nil))
                #expect(stored.customUserID == device.registration.customUserID.applied(to: nil))
                #expect(stored.registrationToken == device.registration.registrationToken)
                #expect(stored.tags == device.tags.sorted())
                #expect(stored.active == device.active)
                #expect(stored.createdAt == 1_000)
                #expect(stored.updatedAt == 2_000)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aSecondImportReplacesTagsAndMovesNothing(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let mine = try await Fixture.make(db.store, type: .android)
            let theirs = try await Fixture.make(db.store, type: .android)
            let kept = UUID()
            let taken = UUID()
            #expect(
                try await db.store.devices.importDevices(
                    [try device(kept, mine.platform, token: "a", alias: "x", tags: ["old", "both"])], applicationID: mine.app.id) == [
                        .imported
                    ])
            #expect(
                try await db.store.devices.importDevices(
                    [try device(taken, theirs.platform, token: "b", alias: "y", tags: ["theirs"])], applicationID: theirs.app.id) == [
                        .imported
                    ])

            let outcomes = try await db.store.devices.importDevices(
                [
                    try device(kept, mine.platform, token: "a2", alias: "x2", tags: ["both", "new"]),
                    try device(taken, mine.platform, token: "c", alias: "z", tags: ["mine"]),
                ], applicationID: mine.app.id)
            #expect(outcomes.first == .updated)
            guard case .rejected(let reason) = outcomes.last else {
                Issue.record("another application's device uuid was not rejected: \(outcomes)")
                return
            }
            #expect(reason.field == "device_uuid")
            let updated = try #require(try await db.store.devices.find(platformID: mine.platform.id, uuid: kept))
            #expect(updated.tags == ["both", "new"])
            #expect(updated.registrationToken == "a2")
            #expect(updated.deviceAlias == "x2")
            let theirsStill = try #require(try await db.store.devices.find(platformID: theirs.platform.id, uuid: taken))
            #expect(theirsStill.tags == ["theirs"])
            #expect(theirsStill.registrationToken == "b")
        }
    }

    /// A chunk of new devices around one already there: each gets its own tags (on SQLite the
    /// ids of a chunk with an existing device are read back rather than assumed), and a deleted
    /// device's id is never given again.
    @Test(arguments: Backend.available)
    func aMixedChunkTagsEachDeviceAndReusesNoID(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store, type: .android)
            let (existing, gone) = (UUID(), UUID())
            #expect(
                try await db.store.devices.importDevices(
                    [
                        try device(existing, fixture.platform, token: "e", alias: "e", tags: ["old"]),
                        try device(gone, fixture.platform, token: "g", alias: "g", tags: ["gone"]),
                    ], applicationID: fixture.app.id) == [.imported, .imported])
            let goneID = try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: gone)).id
            #expect(try await db.store.devices.delete(platformID: fixture.platform.id, uuid: gone))

            // A chunk of only new devices (their ids as Herald gives them on SQLite): above the deleted one's.
            let later = UUID()
            #expect(
                try await db.store.devices.importDevices(
                    [try device(later, fixture.platform, token: "l", alias: "l", tags: ["later"])], applicationID: fixture.app.id) == [
                        .imported
                    ])
            let laterStored = try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: later))
            #expect(laterStored.tags == ["later"])
            #expect(laterStored.id > goneID)
            let fresh = (0..<5).map { _ in UUID() }
            var chunk = try fresh.enumerated().map { index, uuid in
                try device(uuid, fixture.platform, token: "n\(index)", alias: "n\(index)", tags: ["tag-\(index)"])
            }
            chunk.insert(try device(existing, fixture.platform, token: "e2", alias: "e2", tags: ["new"]), at: 2)
            let outcomes = try await db.store.devices.importDevices(chunk, applicationID: fixture.app.id)
            #expect(outcomes == [.imported, .imported, .updated, .imported, .imported, .imported])
            #expect(try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: existing)).tags == ["new"])
            for (index, uuid) in fresh.enumerated() {
                let stored = try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: uuid))
                #expect(stored.tags == ["tag-\(index)"])
                #expect(stored.registrationToken == "n\(index)")
                #expect(stored.id > goneID)
            }
        }
    }
}
