import HeraldCore

import struct Foundation.UUID

/// A bearer token for the admin API; `tenantID == nil` means it may act on every tenant.
package struct AdminToken: Sendable, Equatable {
    package var id: UUID
    package var tenantID: UUID?
    package var name: String
    package var createdAt: Int64
}

/// Admin tokens, stored as hashes: the clear token exists only in the answer that created it.
package struct AdminTokenRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock

    /// Creates a token and returns it with its clear value.
    package func create(tenantID: UUID?, name: String, token: String = Secret.generate()) async throws -> (AdminToken, String) {
        let record = AdminToken(id: UUID(), tenantID: tenantID, name: name, createdAt: clock.now.epochMilliseconds)
        try await database.query(
            """
            INSERT INTO admin_tokens (id, tenant_id, name, token_hash, created_at)
            VALUES (\(record.id), \(record.tenantID), \(record.name), \(Secret.hash(token)), \(record.createdAt))
            """)
        return (record, token)
    }

    /// The token whose clear value is `token`, if any.
    package func authenticate(_ token: String) async throws -> AdminToken? {
        let hash = Secret.hash(token)
        let rows = try await database.query(
            "SELECT id, tenant_id, name, token_hash, created_at FROM admin_tokens WHERE token_hash = \(hash)")
        guard let row = rows.first, Secret.matches(token, storedHash: try row.string("token_hash")) else { return nil }
        return try Self.token(row)
    }

    /// Whether any token may act on every tenant.
    package func hasRootToken() async throws -> Bool {
        try await !database.query("SELECT id FROM admin_tokens WHERE tenant_id IS NULL LIMIT 1").isEmpty
    }

    package func list(tenantID: UUID?) async throws -> [AdminToken] {
        let rows: [SQLRow]
        if let tenantID {
            rows = try await database.query(
                "SELECT id, tenant_id, name, created_at FROM admin_tokens WHERE tenant_id = \(tenantID) ORDER BY created_at, id")
        } else {
            rows = try await database.query("SELECT id, tenant_id, name, created_at FROM admin_tokens ORDER BY created_at, id")
        }
        return try rows.map(Self.token)
    }

    /// Revokes a token; limited to `tenantID`'s tokens when given.
    package func delete(id: UUID, tenantID: UUID?) async throws -> Bool {
        let rows: [SQLRow]
        if let tenantID {
            rows = try await database.query("DELETE FROM admin_tokens WHERE id = \(id) AND tenant_id = \(tenantID) RETURNING id")
        } else {
            rows = try await database.query("DELETE FROM admin_tokens WHERE id = \(id) RETURNING id")
        }
        return !rows.isEmpty
    }

    static func token(_ row: SQLRow) throws -> AdminToken {
        AdminToken(
            id: try row.uuid("id"),
            tenantID: try row.optionalString("tenant_id").flatMap { UUID(text: $0) },
            name: try row.string("name"),
            createdAt: try row.int("created_at"))
    }
}
