import HeraldCore
import struct Foundation.UUID

extension DeviceRepository {
    /// Records a device's time zone (`time_zone` at registration), for local-time pushes.
    public func setTimeZone(_ change: FieldChange<String>, deviceID: Int64) async throws {
        switch change {
        case .unchanged: return
        case .clear: try await database.query("UPDATE devices SET time_zone = NULL WHERE id = \(deviceID) AND time_zone IS NOT NULL")
        case .set(let zone): try await database.query("UPDATE devices SET time_zone = \(zone) WHERE id = \(deviceID)")
        }
    }

    /// The zones the app's devices registered with, for the slots of a local-time push.
    public func timeZones(applicationID: UUID) async throws -> [String] {
        try await database.query(
            "SELECT DISTINCT time_zone FROM devices WHERE app_id = \(applicationID) AND time_zone IS NOT NULL ORDER BY time_zone"
        ).map { try $0.string("time_zone") }
    }
}
