import HeraldCore

import struct Foundation.UUID

/// One subscription to write: a device, its application and one of its tags.
struct DeviceTagRow: Sendable {
    var deviceID: Int64
    var applicationID: UUID
    var tag: String
}

extension DeviceRepository {
    /// Tag rows one `INSERT` writes (three bound values each).
    static let tagRowsPerStatement = 300

    /// Subscribes devices to tags inside the caller's transaction: each tag becomes a live topic
    /// of its application first (`TopicRepository.ensure`, dated `time`), then the rows are
    /// inserted, those already there kept. Registration (`RegistrationBatcher`) and the device
    /// import both write their tags through here.
    static func subscribe(_ rows: [DeviceTagRow], time: Int64, on connection: any SQLExecutor) async throws {
        guard !rows.isEmpty else { return }
        try await TopicRepository.ensure(connection, rows.map { ($0.applicationID, $0.tag) }, time: time)
        for start in stride(from: 0, to: rows.count, by: tagRowsPerStatement) {
            var insert: SQL = "INSERT INTO device_tags (device_id, app_id, tag) VALUES "
            for (index, row) in rows[start..<min(start + tagRowsPerStatement, rows.count)].enumerated() {
                insert.append("\(unsafeRaw: index == 0 ? "" : ", ")(\(row.deviceID), \(row.applicationID), \(row.tag))")
            }
            insert.append(" ON CONFLICT (device_id, tag) DO NOTHING")
            try await connection.query(insert)
        }
    }
}
