import HeraldCore
import struct Foundation.UUID

/// Each app's delivery defaults (`AppDeliverySettings`); an app without a row has the defaults.
public struct DeliverySettingsRepository: Sendable {
    let database: any SQLDatabase

    public func find(applicationID: UUID) async throws -> AppDeliverySettings {
        try await Self.find(database, applicationID: applicationID)
    }

    /// `find`, on `connection` (inside the caller's transaction).
    static func find(_ connection: any SQLExecutor, applicationID: UUID) async throws -> AppDeliverySettings {
        let rows = try await connection.query(
            "SELECT default_time_zone, rate_per_second, quiet_time FROM app_delivery_settings WHERE app_id = \(applicationID)")
        guard let row = rows.first else { return AppDeliverySettings() }
        return AppDeliverySettings(
            defaultTimeZone: try row.string("default_time_zone"), ratePerSecond: try row.optionalInt("rate_per_second").map(Int.init),
            quietTime: try row.optionalString("quiet_time").flatMap(QuietTime.init(stored:)))
    }

    public func save(_ settings: AppDeliverySettings, applicationID: UUID) async throws {
        try await database.query("""
            INSERT INTO app_delivery_settings (app_id, default_time_zone, rate_per_second, quiet_time)
            VALUES (\(applicationID), \(settings.defaultTimeZone), \(settings.ratePerSecond.map(Int64.init)), \(settings.quietTime?.stored))
            ON CONFLICT (app_id) DO UPDATE SET default_time_zone = excluded.default_time_zone,
                rate_per_second = excluded.rate_per_second, quiet_time = excluded.quiet_time
            """)
    }
}
