import HeraldCore

import struct Foundation.UUID

/// Tenants: the top of the ownership tree.
package struct TenantRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock

    /// Creates a tenant; nil if the name is taken.
    package func create(name: String) async throws -> Tenant? {
        let tenant = Tenant(id: UUID(), name: name, createdAt: clock.now.epochMilliseconds)
        do {
            try await database.query(
                "INSERT INTO tenants (id, name, created_at) VALUES (\(tenant.id), \(tenant.name), \(tenant.createdAt))")
        } catch let error as StoreError where error.reason == .uniqueViolation {
            return nil
        }
        return tenant
    }

    package func find(id: UUID) async throws -> Tenant? {
        try await database.query("SELECT id, name, created_at FROM tenants WHERE id = \(id)").first.map(Self.tenant)
    }

    package func find(name: String) async throws -> Tenant? {
        try await database.query("SELECT id, name, created_at FROM tenants WHERE name = \(name)").first.map(Self.tenant)
    }

    package func list() async throws -> [Tenant] {
        try await database.query("SELECT id, name, created_at FROM tenants ORDER BY created_at, id").map(Self.tenant)
    }

    /// Renames a tenant; false if the name is taken.
    package func rename(id: UUID, to name: String) async throws -> Bool {
        do {
            try await database.query("UPDATE tenants SET name = \(name) WHERE id = \(id)")
            return true
        } catch let error as StoreError where error.reason == .uniqueViolation {
            return false
        }
    }

    /// Deletes a tenant that owns no application.
    package func delete(id: UUID) async throws -> DeleteOutcome {
        try await database.transaction { connection in
            // Locked first, so that an application being created is waited for and counted below.
            try await connection.query("SELECT id FROM tenants WHERE id = \(id)\(connection.dialect.rowLock(.update))")
            let apps = try await connection.query("SELECT COUNT(*) AS n FROM applications WHERE tenant_id = \(id)")
            if try apps.first?.int("n") ?? 0 > 0 { return .inUse }
            try await connection.query("DELETE FROM admin_tokens WHERE tenant_id = \(id)")
            let deleted = try await connection.query("DELETE FROM tenants WHERE id = \(id) RETURNING id")
            return deleted.isEmpty ? .notFound : .deleted
        }
    }

    static func tenant(_ row: SQLRow) throws -> Tenant {
        Tenant(id: try row.uuid("id"), name: try row.string("name"), createdAt: try row.int("created_at"))
    }
}

/// What a guarded delete did.
package enum DeleteOutcome: Sendable, Equatable {
    case deleted
    case notFound
    /// Refused: something still depends on the row.
    case inUse
}
