import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// A uuid an operator brings names one application or one platform across the server. Nothing
/// in the schema spans the two tables, so the check reads both: on PostgreSQL, two creations
/// with the same uuid at once must not both pass it.
@Suite struct SharedIdentityRaceTests {
    @Test(.timeLimit(.minutes(2)))
    func aPlatformCannotTakeTheUUIDOfAnApplicationBeingCreated() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let tenant = fixture.app.tenantID
            let id = UUID()

            // An application with this uuid is being created, uncommitted (as `create` writes it).
            let creation = await HeldTransaction.start(on: db.database) { connection in
                try await ApplicationRepository.requireUnusedIdentity(connection, id)
                try await connection.query(
                    """
                    INSERT INTO applications (id, tenant_id, name, description, api_key_hash, verify_custom_user_id, created_at, updated_at)
                    VALUES (\(id), \(tenant), 'Brought', '', 'hash', 1, 0, 0)
                    """)
            }
            let platform = Racer {
                try await db.store.platforms.create(applicationID: fixture.app.id, name: "ios", type: .ios, credentials: nil, id: id)
            }
            try await platform.waitUntilBlockedOrFinished(in: db)
            try await creation.commit()

            await #expect {
                _ = try await platform.value
            } throws: { error in
                (error as? StoreError)?.reason == .uniqueViolation
            }
            #expect(try await db.store.platforms.find(id: id) == nil)
        }
    }
}
