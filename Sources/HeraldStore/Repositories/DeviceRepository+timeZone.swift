import HeraldCore

import struct Foundation.UUID

extension DeviceRepository {
    /// Records a device's time zone (`time_zone` at registration), for local-time pushes.
    package func setTimeZone(_ change: FieldChange<String>, deviceID: Int64) async throws {
        switch change {
        case .unchanged: return
        case .clear: try await database.query("UPDATE devices SET time_zone = NULL WHERE id = \(deviceID) AND time_zone IS NOT NULL")
        case .set(let zone): try await database.query("UPDATE devices SET time_zone = \(zone) WHERE id = \(deviceID)")
        }
    }

    /// The zones the app's devices registered with, for the slots of a local-time push.
    package func timeZones(applicationID: UUID) async throws -> [String] {
        try await Self.timeZones(database, applicationID: applicationID)
    }

    /// `timeZones`, on `connection` (inside the caller's transaction).
    static func timeZones(_ connection: any SQLExecutor, applicationID: UUID) async throws -> [String] {
        try await connection.query(
            "SELECT DISTINCT time_zone FROM devices WHERE app_id = \(applicationID) AND time_zone IS NOT NULL ORDER BY time_zone"
        ).map { try $0.string("time_zone") }
    }
}

extension DeviceRepository {
    // MARK: Quiet time

    /// Records a device's quiet time (`quiet_time` at registration, or the admin API).
    package func setQuietTime(_ change: FieldChange<QuietTime>, deviceID: Int64) async throws {
        switch change {
        case .unchanged: return
        case .clear: try await database.query("UPDATE devices SET quiet_time = NULL WHERE id = \(deviceID) AND quiet_time IS NOT NULL")
        case .set(let quiet): try await database.query("UPDATE devices SET quiet_time = \(quiet.stored) WHERE id = \(deviceID)")
        }
    }

    /// The app's device `uuid`: its row id, time zone and own quiet time; nil when the app has no
    /// such device.
    package func quietTime(applicationID: UUID, uuid: UUID) async throws -> (deviceID: Int64, timeZone: String?, quietTime: QuietTime?)? {
        let rows = try await database.query(
            "SELECT id, time_zone, quiet_time FROM devices WHERE app_id = \(applicationID) AND uuid = \(uuid)")
        guard let row = rows.first else { return nil }
        return (
            try row.int("id"), try row.optionalString("time_zone"), try row.optionalString("quiet_time").flatMap(QuietTime.init(stored:))
        )
    }
}
