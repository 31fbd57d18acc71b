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

    /// Migration 9: Android platforms that existed before it keep the FCM notification block they
    /// sent; other platforms, and Android platforms made afterwards, have none.
    @Test(arguments: Backend.available)
    func androidPlatformsFromBeforeMigration9KeepTheNotificationBlock(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let android = try await Fixture.make(db.store, type: .android, tenantName: "before")
            let ios = try await Fixture.make(db.store, type: .ios, tenantName: "also before")
            #expect(android.platform.fcmNotification == false)
            // The database as it was before migration 9.
            try await db.database.query("ALTER TABLE platforms DROP COLUMN fcm_notification")
            try await db.database.query("DELETE FROM herald_migrations WHERE version = 9")
            #expect(try await db.store.migrator.migrate() == [9])
            #expect(try await db.store.platforms.find(id: android.platform.id)?.fcmNotification == true)
            #expect(try await db.store.platforms.find(id: ios.platform.id)?.fcmNotification == false)
            let after = try await Fixture.make(db.store, type: .android, tenantName: "after")
            #expect(try await db.store.platforms.find(id: after.platform.id)?.fcmNotification == false)
        }
    }
}
