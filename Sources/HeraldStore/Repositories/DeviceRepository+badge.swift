import HeraldCore

import struct Foundation.UUID

extension DeviceRepository {
    // MARK: Badge count

    /// Sets a device's badge count (the app reset it: `"badge": 0`).
    package func setBadge(_ value: Int64, deviceID: Int64) async throws {
        try await database.query("UPDATE devices SET badge = \(value) WHERE id = \(deviceID)")
    }

    /// The badge count of the app's device `uuid`, with the device's row id; nil when the app has
    /// no such device.
    package func badge(applicationID: UUID, uuid: UUID) async throws -> (deviceID: Int64, badge: Int64)? {
        let rows = try await database.query("SELECT id, badge FROM devices WHERE app_id = \(applicationID) AND uuid = \(uuid)")
        guard let row = rows.first else { return nil }
        return (try row.int("id"), try row.int("badge"))
    }
}
