import HeraldCore

import struct Foundation.UUID

/// Devices a push holds until their quiet time ends, due at one time.
package struct QuietTimeHold: Sendable, Equatable {
    /// When they are sent (epoch ms).
    package var dueAt: Int64
    package var devices: Int
}

extension PushRepository {
    /// The push's devices held for their quiet time and not sent yet, by due time (earliest
    /// first, at most `limit` due times): its open batches marked `quiet`.
    package func quietTimeHolds(pushID: UUID, limit: Int = 100) async throws -> [QuietTimeHold] {
        let rows = try await database.query(
            """
            SELECT available_at, device_ids FROM push_jobs
            WHERE push_id = \(pushID) AND state IN ('ready', 'claimed') AND quiet = 1
            ORDER BY available_at
            """)
        var holds: [QuietTimeHold] = []
        for row in rows {
            let due = try row.int("available_at")
            let devices = try row.string("device_ids").utf8.reduce(1) { $1 == UInt8(ascii: ",") ? $0 + 1 : $0 }
            if holds.last?.dueAt == due {
                holds[holds.count - 1].devices += devices
            } else if holds.count < limit {
                holds.append(QuietTimeHold(dueAt: due, devices: devices))
            } else {
                break
            }
        }
        return holds
    }
}
