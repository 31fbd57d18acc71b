import HeraldCore

import struct Foundation.UUID

extension PushRepository {
    // MARK: Autobadge

    /// For a batch of a push with a relative badge (`"+1"`): the number each of `deviceIDs`
    /// shows, its count plus `delta` (kept from 0 to `BadgeChange.limit`).
    ///
    /// Each device's count changes once per push: the number is stored with the change
    /// (`push_badges`), in one transaction, so a retried batch, or one a worker takes over after
    /// another's lease ran out, sends the number already counted. The job's row is locked first,
    /// so that a worker whose lease ran out counts nothing (`leaseLost`) and a concurrent claim
    /// of the same job waits for this transaction. Devices that no longer exist are left out.
    package func badges(for job: PushJob, adding delta: Int64, deviceIDs: [Int64]) async throws -> [Int64: Int64] {
        guard !deviceIDs.isEmpty else { return [:] }
        let lock = database.dialect == .postgres ? " FOR UPDATE" : ""
        let dialect = database.dialect
        return try await database.transaction { connection in
            let held = try await connection.query("SELECT id FROM push_jobs WHERE \(Self.held(job))\(unsafeRaw: lock)")
            if held.isEmpty { throw Self.leaseLost(job) }
            var badges: [Int64: Int64] = [:]
            let counted = try await connection.query(
                "SELECT device_id, badge FROM push_badges WHERE push_id = \(job.pushID) AND \(Self.among(deviceIDs, column: "device_id", dialect))"
            )
            for row in counted { badges[try row.int("device_id")] = try row.int("badge") }
            let fresh = deviceIDs.filter { badges[$0] == nil }
            guard !fresh.isEmpty else { return badges }
            // Integers chosen by code, written as text: one plan for every batch.
            let sum = "badge + (\(delta))"
            let limit = BadgeChange.limit
            let changed = try await connection.query(
                """
                UPDATE devices SET badge = CASE WHEN \(unsafeRaw: sum) < 0 THEN 0 WHEN \(unsafeRaw: sum) > \(unsafeRaw: String(limit))
                    THEN \(unsafeRaw: String(limit)) ELSE \(unsafeRaw: sum) END
                WHERE \(Self.among(fresh, column: "id", dialect)) RETURNING id, badge
                """)
            guard !changed.isEmpty else { return badges }
            var rows: [String] = []
            for row in changed {
                let id = try row.int("id")
                let badge = try row.int("badge")
                badges[id] = badge
                rows.append("(\(id), \(badge))")
            }
            try await connection.query(
                """
                WITH v (device_id, badge) AS (VALUES \(unsafeRaw: rows.joined(separator: ", ")))
                INSERT INTO push_badges (push_id, device_id, badge) SELECT \(job.pushID), device_id, badge FROM v
                """)
            return badges
        }
    }

    /// For a push with a number as its badge: the devices' counts become that number, so that a
    /// later `"+1"` counts on from what they show.
    package func setBadges(_ value: Int64, deviceIDs: [Int64]) async throws {
        guard !deviceIDs.isEmpty else { return }
        try await database.query(
            "UPDATE devices SET badge = \(value) WHERE \(Self.among(deviceIDs, column: "id", database.dialect)) AND badge <> \(value)")
    }

    /// `column` is one of `ids`, bound as one value rather than hundreds of parameters to parse,
    /// bind and plan (`SQLValue.integers`): a PostgreSQL `bigint[]`, or on SQLite a JSON array
    /// read by `json_each`. SQLite would parse a batch's thousand-placeholder list anew for each
    /// batch; one JSON value is parsed much faster (docs/benchmarks-history.md, issue 18).
    ///
    /// On SQLite each id is a primary-key look-up. On PostgreSQL so is each id of a scattered
    /// list, but ids that lie close together (a broadcast's batch: consecutive devices of one
    /// app) are read as one range of the index, the list only filtering it: one descent instead
    /// of one for each id (docs/benchmarks-history.md, "PostgreSQL's share, batches of 4,000, and a batch read
    /// as one range"). SQLite gained nothing from the range, so it keeps the look-ups.
    static func among(_ ids: [Int64], column: String, _ dialect: SQLDialect) -> SQL {
        let list = SQLValue.integers(ids)
        switch dialect {
        case .postgres:
            // At most four rows read for each one wanted. The list stays a filter, which
            // PostgreSQL hashes as it is bound as a `bigint[]` (a `text` cast to one is not hashed:
            // it searched the list for each row): `+ 0` keeps the planner from making it an
            // index condition again.
            if let lowest = ids.min(), let highest = ids.max(), (highest &- lowest) / 4 < Int64(ids.count) {
                return "\(unsafeRaw: column) BETWEEN \(lowest) AND \(highest) AND \(unsafeRaw: column) + 0 = ANY(\(list))"
            }
            return "\(unsafeRaw: column) = ANY(\(list))"
        case .sqlite:
            return "\(unsafeRaw: column) IN (SELECT value FROM json_each(\(list)))"
        }
    }
}
