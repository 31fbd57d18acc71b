import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct TransactionTests {
    struct Refused: Error {}

    /// Concurrent transactions commit independently: one that throws leaves no trace and does
    /// not take the others (which SQLite's group commit wrote in the same batch) down with it.
    @Test(arguments: Backend.available)
    func aFailingTransactionRollsBackAloneAmongConcurrentOnes(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        do {
                            try await db.database.transaction { connection in
                                try await connection.query(
                                    "INSERT INTO tenants (id, name, created_at) VALUES (\(UUID()), \("t\(index)"), 0)")
                                if index % 10 == 3 { throw Refused() }
                            }
                            return true
                        } catch is Refused {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 45)
            let names = Set(try await db.database.query("SELECT name FROM tenants").map { try $0.string("name") })
            #expect(names.count == 45)
            #expect(!names.contains("t3") && !names.contains("t13") && names.contains("t4"))
        }
    }

    /// A transaction's result comes back to its caller, and a unique violation is typed.
    @Test(arguments: Backend.available)
    func resultsAndConstraintErrorsReachTheirCallers(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let id = UUID()
            let echoed = try await db.database.transaction { connection in
                try await connection.query("INSERT INTO tenants (id, name, created_at) VALUES (\(id), 'x', 0) RETURNING id")
                    .first?.uuid("id")
            }
            #expect(echoed == id)
            let error = await #expect(throws: StoreError.self) {
                try await db.database.query("INSERT INTO tenants (id, name, created_at) VALUES (\(UUID()), 'x', 0)")
            }
            #expect(error?.reason == .uniqueViolation)
        }
    }

    /// Many distinct registrations at once (batched together) each get their own device and tags;
    /// optional fields given by some and not others (a batch's columns mix values and NULLs)
    /// each land on their own device.
    @Test(arguments: Backend.available)
    func concurrentRegistrationsAreEachStoredWithTheirTags(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let tokens = (0..<300).map { _ in randomAPNsToken() }
            let devices = try await withThrowingTaskGroup(of: (String, Device).self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask {
                        let registration = try RegistrationInput(
                            osVersion: index % 2 == 0 ? .set("17.\(index)") : .unchanged, registrationToken: token,
                            customUserID: index % 3 == 0 ? .unchanged : .set("user\(index)"), tags: .replace(["n\(index)", "all"])
                        ).validated(for: .ios, requireToken: true)
                        return (token, try await db.store.devices.register(on: fixture.platform, registration))
                    }
                }
                return try await group.reduce(into: [String: Device]()) { $0[$1.0] = $1.1 }
            }
            #expect(Set(devices.values.map(\.uuid)).count == 300)
            for (index, token) in tokens.enumerated() {
                let device = try #require(devices[token])
                #expect(device.registrationToken == token)
                #expect(device.customUserID == (index % 3 == 0 ? nil : "user\(index)"))
                #expect(device.osVersion == (index % 2 == 0 ? "17.\(index)" : nil))
                #expect(device.tags == ["all", "n\(index)"])
            }
            let tagged = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(topic: "all"), page: 1, size: 0)
            #expect(tagged.total == 300)
            let stored = try #require(try await db.store.devices.find(platformID: fixture.platform.id, uuid: devices[tokens[7]]!.uuid))
            #expect(stored.tags == ["all", "n7"])
        }
    }

    /// Devices registered again all at once (so in batches) end with exactly their new tags:
    /// the tags they keep, the ones they gain, none of the ones they dropped.
    @Test(arguments: Backend.available)
    func concurrentReRegistrationsReplaceEachDevicesTags(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let tokens = (0..<100).map { _ in randomAPNsToken() }
            func registerAll(_ tags: @escaping @Sendable (Int) -> [String]) async throws -> [String: Device] {
                try await withThrowingTaskGroup(of: (String, Device).self) { group in
                    for (index, token) in tokens.enumerated() {
                        group.addTask {
                            let registration = try RegistrationInput(registrationToken: token, tags: .replace(tags(index)))
                                .validated(for: .ios, requireToken: true)
                            return (token, try await db.store.devices.register(on: fixture.platform, registration))
                        }
                    }
                    return try await group.reduce(into: [String: Device]()) { $0[$1.0] = $1.1 }
                }
            }
            let first = try await registerAll { ["kept", "old\($0)"] }
            let second = try await registerAll { $0 % 2 == 0 ? ["kept", "new\($0)"] : [] }
            for (index, token) in tokens.enumerated() {
                let device = try #require(second[token])
                #expect(device.uuid == first[token]?.uuid)
                let expected = index % 2 == 0 ? ["kept", "new\(index)"] : []
                #expect(device.tags == expected)
                #expect(try await db.store.devices.find(platformID: fixture.platform.id, uuid: device.uuid)?.tags == expected)
            }
            let kept = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(topic: "kept"), page: 1, size: 0)
            #expect(kept.total == 50)
            let old = try await db.store.devices.search(
                applicationID: fixture.app.id, filter: DeviceFilter(topic: "old3"), page: 1, size: 0)
            #expect(old.total == 0)
        }
    }
}
