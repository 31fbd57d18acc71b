import HeraldCore

import struct Foundation.UUID

/// What `herald import` last saw of each device at a source (one per `source`, its URL), so
/// that a re-run writes only what changed there since, and keeps what devices changed on Herald.
package struct ImportSnapshotRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock

    /// Snapshots a statement writes.
    static let rowsPerStatement = 500

    /// The app's snapshots from `source`, by device uuid after `after` (lower-case text), at
    /// most `limit`, in device uuid order.
    package func list(applicationID: UUID, source: String, after: String, limit: Int) async throws -> [(
        deviceUUID: String, snapshot: String
    )] {
        try await database.query(
            """
            SELECT device_uuid, snapshot FROM import_snapshots
            WHERE app_id = \(applicationID) AND source = \(source) AND device_uuid > \(after)
            ORDER BY device_uuid LIMIT \(Int64(limit))
            """
        ).map { row in (deviceUUID: try row.string("device_uuid"), snapshot: try row.string("snapshot")) }
    }

    /// Stores each device's snapshot from `source`, replacing the one it had, in one transaction.
    package func save(applicationID: UUID, source: String, _ snapshots: [(deviceUUID: String, snapshot: String)]) async throws {
        guard !snapshots.isEmpty else { return }
        // One row a device: PostgreSQL refuses an upsert that touches a row twice in one
        // statement (SQLSTATE 21000), so a batch naming a device twice keeps its last snapshot,
        // as saving them one after the other would.
        var last: [String: Int] = [:]
        for (index, entry) in snapshots.enumerated() { last[entry.deviceUUID] = index }
        let snapshots = snapshots.indices.filter { last[snapshots[$0].deviceUUID] == $0 }.map { snapshots[$0] }
        let time = clock.now.epochMilliseconds
        try await database.transaction { connection in
            for start in stride(from: 0, to: snapshots.count, by: Self.rowsPerStatement) {
                var insert: SQL = "INSERT INTO import_snapshots (app_id, source, device_uuid, snapshot, updated_at) VALUES "
                for index in start..<min(start + Self.rowsPerStatement, snapshots.count) {
                    let (uuid, snapshot) = snapshots[index]
                    insert.append("\(unsafeRaw: index == start ? "" : ",") (\(applicationID), \(source), \(uuid), \(snapshot), \(time))")
                }
                insert.append(
                    """
                     ON CONFLICT (app_id, source, device_uuid) DO UPDATE SET snapshot = excluded.snapshot, updated_at = excluded.updated_at
                    """)
                try await connection.query(insert)
            }
        }
    }
}
