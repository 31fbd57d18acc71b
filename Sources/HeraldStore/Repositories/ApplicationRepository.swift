import HeraldCore

import struct Foundation.UUID

/// Applications and their api keys (stored as hashes).
package struct ApplicationRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock
    private let cache = CredentialCache<App>()

    private static let columns = "id, tenant_id, name, description, include_receipt_id, verify_custom_user_id, created_at, updated_at"

    /// Creates an application and returns it with its clear api key.
    ///
    /// - Parameters:
    ///   - verifiesCustomUserID: whether registrations must sign their custom user ids.
    ///   - id: a uuid the operator brings (checked by the caller); generated when nil. A uuid that
    ///     any application or platform already has, in any tenant, throws `StoreError` `.uniqueViolation`.
    ///   - apiKey: an api key the operator brings (checked by the caller); generated when nil. Stored
    ///     hashed, as a generated one.
    package func create(
        tenantID: UUID, name: String, description: String, verifiesCustomUserID: Bool = true, id: UUID? = nil, apiKey: String? = nil
    ) async throws -> (App, String) {
        let time = clock.now.epochMilliseconds
        let app = App(
            id: id ?? UUID(), tenantID: tenantID, name: name, description: description, verifiesCustomUserID: verifiesCustomUserID,
            createdAt: time, updatedAt: time)
        let apiKey = apiKey ?? Secret.generate()
        try await database.transaction { connection in
            if id != nil { try await Self.requireUnusedIdentity(connection, app.id) }
            try await connection.query(
                """
                INSERT INTO applications (id, tenant_id, name, description, api_key_hash, verify_custom_user_id, created_at, updated_at)
                VALUES (\(app.id), \(app.tenantID), \(app.name), \(app.description), \(Secret.hash(apiKey)),
                    \(verifiesCustomUserID ? 1 : 0), \(time), \(time))
                """)
        }
        return (app, apiKey)
    }

    /// Throws `.uniqueViolation` when an application or a platform, of any tenant, has `id`:
    /// the uuids a client presents name one thing across the whole server.
    static func requireUnusedIdentity(_ connection: any SQLExecutor, _ id: UUID) async throws {
        // No constraint spans the two tables: creations of one uuid take turns, and the second
        // sees the first's row.
        try await AdvisoryLock.identity(id).take(on: connection)
        let rows = try await connection.query(
            "SELECT id FROM applications WHERE id = \(id) UNION ALL SELECT id FROM platforms WHERE id = \(id)")
        if !rows.isEmpty {
            throw StoreError(reason: .uniqueViolation, message: "the uuid \(id.lowercasedString) is in use")
        }
    }

    /// The application, if it exists (and belongs to `tenantID` when given).
    package func find(id: UUID, tenantID: UUID? = nil) async throws -> App? {
        let rows = try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM applications WHERE id = \(id)")
        guard let app = try rows.first.map(Self.application) else { return nil }
        if let tenantID, app.tenantID != tenantID { return nil }
        return app
    }

    /// The application whose id and api key these are; nil for any mismatch.
    package func authenticate(id: UUID, apiKey: String) async throws -> App? {
        try await cache.authenticate(id, secret: apiKey, now: clock.now.epochMilliseconds) {
            let rows = try await database.query(
                "SELECT \(unsafeRaw: Self.columns), api_key_hash FROM applications WHERE id = \(id)")
            guard let row = rows.first else { return nil }
            return (try row.string("api_key_hash"), try Self.application(row))
        }
    }

    package func list(tenantID: UUID?) async throws -> [App] {
        let rows: [SQLRow]
        if let tenantID {
            rows = try await database.query(
                "SELECT \(unsafeRaw: Self.columns) FROM applications WHERE tenant_id = \(tenantID) ORDER BY created_at, id")
        } else {
            rows = try await database.query("SELECT \(unsafeRaw: Self.columns) FROM applications ORDER BY created_at, id")
        }
        return try rows.map(Self.application)
    }

    /// Changes name, description and settings; the id never changes.
    package func update(
        id: UUID, name: String?, description: String?, includesReceiptID: Bool? = nil, verifiesCustomUserID: Bool? = nil
    ) async throws -> App? {
        let time = clock.now.epochMilliseconds
        // After the commit: a request authenticated meanwhile would cache the row as it was.
        defer { cache.invalidate(id) }
        return try await database.transaction { connection -> App? in
            // Locked: the fields not given are written back as read.
            let rows = try await connection.query(
                "SELECT \(unsafeRaw: Self.columns) FROM applications WHERE id = \(id)\(connection.dialect.rowLock(.noKeyUpdate))")
            guard var app = try rows.first.map(Self.application) else { return nil }
            if let name { app.name = name }
            if let description { app.description = description }
            if let includesReceiptID { app.includesReceiptID = includesReceiptID }
            if let verifiesCustomUserID { app.verifiesCustomUserID = verifiesCustomUserID }
            app.updatedAt = time
            try await connection.query(
                """
                UPDATE applications SET name = \(app.name), description = \(app.description),
                    include_receipt_id = \(app.includesReceiptID ? 1 : 0), verify_custom_user_id = \(app.verifiesCustomUserID ? 1 : 0),
                    updated_at = \(app.updatedAt)
                WHERE id = \(id)
                """)
            return app
        }
    }

    /// Replaces the api key; the old one stops working at once. Returns the new clear key.
    package func regenerateAPIKey(id: UUID) async throws -> String? {
        let apiKey = Secret.generate()
        defer { cache.invalidate(id) }
        let rows = try await database.query(
            "UPDATE applications SET api_key_hash = \(Secret.hash(apiKey)), updated_at = \(clock.now.epochMilliseconds) WHERE id = \(id) RETURNING id"
        )
        return rows.isEmpty ? nil : apiKey
    }

    /// Deletes an application that has no platforms.
    package func delete(id: UUID) async throws -> DeleteOutcome {
        defer { cache.invalidate(id) }
        return try await database.transaction { connection in
            // Locked first, so that a platform being created is waited for and counted below
            // (docs/ARCHITECTURE.md, "Concurrency on PostgreSQL").
            try await connection.query("SELECT id FROM applications WHERE id = \(id)\(connection.dialect.rowLock(.update))")
            let platforms = try await connection.query("SELECT COUNT(*) AS n FROM platforms WHERE app_id = \(id)")
            if try platforms.first?.int("n") ?? 0 > 0 { return .inUse }
            let deleted = try await connection.query("DELETE FROM applications WHERE id = \(id) RETURNING id")
            return deleted.isEmpty ? .notFound : .deleted
        }
    }

    static func application(_ row: SQLRow) throws -> App {
        App(
            id: try row.uuid("id"), tenantID: try row.uuid("tenant_id"), name: try row.string("name"),
            description: try row.string("description"), includesReceiptID: try row.int("include_receipt_id") != 0,
            verifiesCustomUserID: try row.int("verify_custom_user_id") != 0,
            createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
    }
}
