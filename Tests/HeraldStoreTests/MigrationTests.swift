import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct MigrationTests {
    @Test(arguments: Backend.available)
    func migratingTwiceAppliesNothingNew(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            #expect(try await db.store.migrator.isCurrent())
            #expect(try await db.store.migrator.migrate().isEmpty)
            #expect(try await db.store.migrator.appliedVersions() == Schema.migrations.map(\.version))
        }
    }

    @Test(arguments: Backend.available)
    func refusesADatabaseNewerThanTheBuild(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            try await db.database.query("INSERT INTO herald_migrations (version, name, applied_at) VALUES (9999, 'future', 0)")
            let error = await #expect(throws: StoreError.self) { try await db.store.migrator.migrate() }
            #expect(error?.reason == .schemaTooNew)
        }
    }
}
