import HeraldCore

import struct Foundation.UUID

/// Each app's delivery defaults (`AppDeliverySettings`); an app without a row has the defaults.
package struct DeliverySettingsRepository: Sendable {
    let database: any SQLDatabase

    package func find(applicationID: UUID) async throws -> AppDeliverySettings {
        try await Self.find(database, applicationID: applicationID)
    }

    /// `find`, on `connection` (inside the caller's transaction).
    static func find(_ connection: any SQLExecutor, applicationID: UUID) async throws -> AppDeliverySettings {
        let rows = try await connection.query(
            "SELECT default_time_zone, rate_per_second, quiet_time FROM app_delivery_settings WHERE app_id = \(applicationID)")
        return try rows.first.map(Self.settings) ?? AppDeliverySettings()
    }

    /// Replaces the app's settings whole.
    package func save(_ settings: AppDeliverySettings, applicationID: UUID) async throws {
        try await database.query(Self.upsert(settings, applicationID: applicationID))
    }

    /// Changes the app's settings from what they are and returns them as saved: `change` sees
    /// them with the row locked (inserted with the defaults first when the app has none, so that
    /// there is a row to lock), so that a concurrent change of another field is kept rather than
    /// written back as it was read (docs/ARCHITECTURE.md, "Concurrency on PostgreSQL"). If
    /// `change` throws, nothing is written.
    package func update(
        applicationID: UUID, _ change: @escaping @Sendable (inout AppDeliverySettings) throws -> Void
    ) async throws -> AppDeliverySettings {
        let defaults = AppDeliverySettings()
        return try await database.transaction { connection in
            try await connection.query(
                """
                INSERT INTO app_delivery_settings (app_id, default_time_zone, rate_per_second, quiet_time)
                VALUES (\(applicationID), \(defaults.defaultTimeZone), NULL, NULL) ON CONFLICT (app_id) DO NOTHING
                """)
            let rows = try await connection.query(
                """
                SELECT default_time_zone, rate_per_second, quiet_time FROM app_delivery_settings
                WHERE app_id = \(applicationID)\(connection.dialect.rowLock(.noKeyUpdate))
                """)
            var settings = try rows.first.map(Self.settings) ?? defaults
            try change(&settings)
            try await connection.query(Self.upsert(settings, applicationID: applicationID))
            return settings
        }
    }

    static func upsert(_ settings: AppDeliverySettings, applicationID: UUID) -> SQL {
        """
        INSERT INTO app_delivery_settings (app_id, default_time_zone, rate_per_second, quiet_time)
        VALUES (\(applicationID), \(settings.defaultTimeZone), \(settings.ratePerSecond.map(Int64.init)), \(settings.quietTime?.stored))
        ON CONFLICT (app_id) DO UPDATE SET default_time_zone = excluded.default_time_zone,
            rate_per_second = excluded.rate_per_second, quiet_time = excluded.quiet_time
        """
    }

    static func settings(_ row: SQLRow) throws -> AppDeliverySettings {
        AppDeliverySettings(
            defaultTimeZone: try row.string("default_time_zone"), ratePerSecond: try row.optionalInt("rate_per_second").map(Int.init),
            quietTime: try row.optionalString("quiet_time").flatMap(QuietTime.init(stored:)))
    }
}
