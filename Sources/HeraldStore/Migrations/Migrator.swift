import HeraldCore
import Logging

/// Applies the schema's migrations that a database has not seen yet.
package struct Migrator: Sendable {
    package let database: any SQLDatabase
    package let migrations: [Migration]
    let clock: EpochClock
    let logger: Logger

    package init(database: any SQLDatabase, migrations: [Migration] = Schema.migrations, clock: EpochClock, logger: Logger) {
        self.database = database
        self.migrations = migrations
        self.clock = clock
        self.logger = logger
    }

    /// The versions already applied.
    package func appliedVersions() async throws -> [Int64] {
        try await ensureTable()
        return try await database.query("SELECT version FROM herald_migrations ORDER BY version").map { try $0.int("version") }
    }

    /// Applies every pending migration, each in its own transaction; returns the versions applied.
    ///
    /// Safe to run from several processes at once: on PostgreSQL an advisory lock, on SQLite the
    /// write lock, lets one apply a migration while the others wait and then skip it.
    @discardableResult
    package func migrate() async throws -> [Int64] {
        try await ensureTable()
        let known = migrations.map(\.version).max() ?? 0
        var applied: [Int64] = []
        for migration in migrations.sorted(by: { $0.version < $1.version }) {
            let dialect = database.dialect
            let now = clock.now.epochMilliseconds
            let didApply = try await database.transaction { connection in
                if dialect == .postgres {
                    try await connection.query("SELECT pg_advisory_xact_lock(72657268)")
                }
                let existing = try await connection.query("SELECT version FROM herald_migrations WHERE version = \(migration.version)")
                guard existing.isEmpty else { return false }
                for statement in migration.sql(for: dialect) {
                    try await connection.query(SQL(unsafeText: statement))
                }
                try await connection.query(
                    "INSERT INTO herald_migrations (version, name, applied_at) VALUES (\(migration.version), \(migration.name), \(now))")
                return true
            }
            if didApply {
                logger.info("applied migration", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
                applied.append(migration.version)
            }
        }
        let newest = try await appliedVersions().max() ?? 0
        if newest > known {
            throw StoreError(
                reason: .schemaTooNew,
                message: "the database has schema version \(newest), newer than this build's \(known): upgrade Herald")
        }
        return applied
    }

    /// Whether every known migration has been applied.
    package func isCurrent() async throws -> Bool {
        Set(try await appliedVersions()).isSuperset(of: migrations.map(\.version))
    }

    private func ensureTable() async throws {
        try await database.query(
            """
            CREATE TABLE IF NOT EXISTS herald_migrations (
                version BIGINT PRIMARY KEY,
                name TEXT NOT NULL,
                applied_at BIGINT NOT NULL
            )
            """)
    }
}
