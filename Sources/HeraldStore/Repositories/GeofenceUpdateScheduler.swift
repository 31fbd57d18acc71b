import HeraldCore

import struct Foundation.Data
import class Foundation.JSONDecoder
import struct Foundation.UUID

/// Keeps at most one pending geofence-update push per application (and one per future start
/// time), inside the transaction of the change that needs it.
///
/// The push is an ordinary push whose fan-out job is due later: each change while it waits
/// widens its audience and moves it back (up to the policy's maximum), and the delivery workers
/// send it like any other once due. Once its fan-out has been claimed, the next change makes a
/// new one. Being rows, pending pushes survive a restart and are shared by every process.
enum GeofenceUpdateScheduler {
    /// Schedules the update push for `audience`.
    ///
    /// - Parameter startsAt: a geofence's future start time: devices must sync when it begins,
    ///   so the push for it is due then (one per application and start time) rather than soon.
    static func schedule(
        _ connection: any SQLExecutor, applicationID: UUID, audience: GeofenceAudience, startsAt: Int64? = nil, now: Int64,
        policy: GeofenceUpdatePolicy
    ) async throws {
        let slot = startsAt.flatMap { $0 > now ? $0 : nil } ?? 0
        // The pending push's audience is read, merged and written back, and its row may not
        // exist yet: on PostgreSQL two changes at once would each merge into what they read
        // before the other committed (the later write dropping the earlier change's devices), or
        // each make a push. The app's advisory lock makes the second wait and read the first's.
        try await AdvisoryLock.geofenceUpdatePush(applicationID: applicationID).take(on: connection)
        let rows = try await connection.query(
            """
            SELECT push_id, first_change_at, platforms, topics, everyone FROM geofence_update_pushes
            WHERE app_id = \(applicationID) AND slot = \(slot)
            """)
        if let row = rows.first {
            let pushID = try row.uuid("push_id")
            let firstChange = try row.int("first_change_at")
            let due = slot > 0 ? slot : min(now + policy.delay, firstChange + policy.maximumDelay)
            let pending = try await connection.query(
                """
                UPDATE push_jobs SET available_at = \(due)
                WHERE push_id = \(pushID) AND kind = 'fanout' AND state = 'ready'
                RETURNING id
                """)
            if !pending.isEmpty {
                let merged = try audienceOf(row).union(audience)
                try await connection.query(
                    "UPDATE pushes SET request = \(AcceptedPush(GeofenceUpdatePush.push(for: merged)).storedText) WHERE id = \(pushID)")
                try await connection.query(
                    """
                    UPDATE geofence_update_pushes
                    SET platforms = \(platformsText(merged)), topics = \(topicsText(merged)), everyone = \(merged.everyone)
                    WHERE app_id = \(applicationID) AND slot = \(slot)
                    """)
                return
            }
        }
        // Nothing pending: a new push, due after the delay (or at the start time).
        let pushID = UUID.timeOrdered(milliseconds: now)
        try await PushRepository.insert(
            connection, id: pushID, applicationID: applicationID, request: AcceptedPush(GeofenceUpdatePush.push(for: audience)).storedText,
            expiresAt: nil, availableAt: slot > 0 ? slot : now + policy.delay, time: now)
        try await connection.query(
            """
            INSERT INTO geofence_update_pushes (app_id, slot, push_id, first_change_at, platforms, topics, everyone)
            VALUES (\(applicationID), \(slot), \(pushID), \(now), \(platformsText(audience)), \(topicsText(audience)), \(audience.everyone))
            ON CONFLICT (app_id, slot) DO UPDATE SET push_id = excluded.push_id, first_change_at = excluded.first_change_at,
                platforms = excluded.platforms, topics = excluded.topics, everyone = excluded.everyone
            """)
        // Start-time slots that have passed were sent; forget them.
        try await connection.query(
            "DELETE FROM geofence_update_pushes WHERE app_id = \(applicationID) AND slot > 0 AND slot < \(now)")
    }

    static func audienceOf(_ row: SQLRow) throws -> GeofenceAudience {
        let platforms = try row.string("platforms").split(separator: ",").compactMap { PlatformType(rawValue: String($0)) }
        let topics = try JSONDecoder().decode([String].self, from: Data(try row.string("topics").utf8))
        return GeofenceAudience(platforms: Set(platforms), topics: Set(topics), everyone: try row.bool("everyone"))
    }

    static func platformsText(_ audience: GeofenceAudience) -> String {
        audience.platforms.map(\.rawValue).sorted().joined(separator: ",")
    }

    static func topicsText(_ audience: GeofenceAudience) -> String {
        JSONValue.array(audience.topics.sorted().map(JSONValue.string)).jsonText
    }
}
