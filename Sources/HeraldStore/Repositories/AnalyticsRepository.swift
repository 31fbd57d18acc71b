import HeraldCore

import struct Foundation.UUID

/// One bucket of an application's analytics time series.
package struct AnalyticsBucket: Sendable, Equatable {
    /// Epoch milliseconds of the bucket's start (UTC).
    package var start: Int64
    /// Events by type.
    package var counts: [String: Int]

    package init(start: Int64, counts: [String: Int]) {
        self.start = start
        self.counts = counts
    }
}

/// The events devices report, and their hourly aggregates.
///
/// Raw events are kept for the retention period; the aggregates — counts per application, push,
/// geofence, event type and hour — are kept for ever and answer every query. A batch is stored
/// and aggregated in one transaction: two multi-row statements per batch (the events, then one
/// upsert of the batch's distinct aggregate keys), so the cost per event is a row, not a round trip.
package struct AnalyticsRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock

    /// Rows per multi-row statement: well under both backends' limits on bound values.
    static let rowsPerStatement = 500

    /// Stores a validated batch and adds it to the aggregates, all or nothing.
    package func record(_ events: [AnalyticsEvent], applicationID: UUID, platformID: UUID) async throws {
        guard !events.isEmpty else { return }
        let time = clock.now.epochMilliseconds
        var aggregates: [AggregateKey: Int] = [:]
        for event in events {
            let key = AggregateKey(
                pushID: event.receiptID ?? "", geofenceID: event.geofenceID.flatMap { Int64($0) } ?? 0, type: event.type,
                hour: event.hour)
            aggregates[key, default: 0] += 1
        }
        // A fixed order of upserts: concurrent batches on PostgreSQL lock shared rows in the same order.
        let keys = aggregates.keys.sorted()
        let counts = aggregates
        try await database.transaction { connection in
            for start in stride(from: 0, to: events.count, by: Self.rowsPerStatement) {
                var sql: SQL = """
                    INSERT INTO analytics_events (app_id, platform_id, event_type, event_time, received_at, receipt_id, device_uuid,
                        geofence_id, location_id, sdk_version, platform_type) VALUES
                    """
                for (index, event) in events[start..<min(start + Self.rowsPerStatement, events.count)].enumerated() {
                    sql.append(index == 0 ? " (" : ", (")
                    sql.append(
                        """
                        \(applicationID), \(platformID), \(event.type), \(event.time), \(time), \(event.receiptID), \(event.deviceUUID),
                        \(event.geofenceID), \(event.locationID), \(event.sdkVersion), \(event.platformType))
                        """)
                }
                try await connection.query(sql)
            }
            for start in stride(from: 0, to: keys.count, by: Self.rowsPerStatement) {
                var sql: SQL = "INSERT INTO analytics_hourly (app_id, push_id, geofence_id, event_type, hour, count) VALUES "
                for (index, key) in keys[start..<min(start + Self.rowsPerStatement, keys.count)].enumerated() {
                    let count = counts[key] ?? 0
                    sql.append(index == 0 ? "(" : ", (")
                    sql.append("\(applicationID), \(key.pushID), \(key.geofenceID), \(key.type), \(key.hour), \(count))")
                }
                sql.append(
                    """
                     ON CONFLICT (app_id, push_id, geofence_id, event_type, hour)
                    DO UPDATE SET count = analytics_hourly.count + excluded.count
                    """)
                try await connection.query(sql)
            }
        }
    }

    /// The events reported for one push, by type.
    package func counts(pushID: UUID, applicationID: UUID) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await database.query(
            """
            SELECT event_type, CAST(SUM(count) AS BIGINT) AS n FROM analytics_hourly
            WHERE app_id = \(applicationID) AND push_id = \(pushID.lowercasedString)
            GROUP BY event_type
            """)
        {
            counts[try row.string("event_type")] = Int(try row.int("n"))
        }
        return counts
    }

    /// The events reported for one geofence, by type.
    package func counts(geofenceID: Int64, applicationID: UUID) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await database.query(
            """
            SELECT event_type, CAST(SUM(count) AS BIGINT) AS n FROM analytics_hourly
            WHERE app_id = \(applicationID) AND geofence_id = \(geofenceID)
            GROUP BY event_type
            """)
        {
            counts[try row.string("event_type")] = Int(try row.int("n"))
        }
        return counts
    }

    /// The application's events by type in buckets of `interval` from `from` to `to` (epoch ms,
    /// `to` excluded), every bucket present (empty ones with no counts), oldest first; with
    /// `pushID`, only the events reported for that push.
    package func summary(
        applicationID: UUID, pushID: UUID? = nil, from: Int64, to: Int64, interval: AnalyticsInterval
    ) async throws -> [AnalyticsBucket] {
        let first = interval.bucketStart(from)
        var buckets: [Int64: [String: Int]] = [:]
        var start = first
        while start < to {
            buckets[start] = [:]
            start += interval.milliseconds
        }
        var condition: SQL = "app_id = \(applicationID) AND hour >= \(first) AND hour < \(to)"
        if let pushID { condition.append(" AND push_id = \(pushID.lowercasedString)") }
        for row in try await database.query(
            """
            SELECT hour, event_type, CAST(SUM(count) AS BIGINT) AS n FROM analytics_hourly WHERE \(condition)
            GROUP BY hour, event_type
            """)
        {
            let bucket = interval.bucketStart(try row.int("hour"))
            buckets[bucket, default: [:]][try row.string("event_type"), default: 0] += Int(try row.int("n"))
        }
        return buckets.keys.sorted().map { AnalyticsBucket(start: $0, counts: buckets[$0] ?? [:]) }
    }

    /// Deletes raw events received before `cutoff` (epoch ms), a batch at a time so that no
    /// statement holds the writer long; the aggregates stay. Returns how many went.
    @discardableResult
    package func deleteEvents(receivedBefore cutoff: Int64, batchSize: Int = 10_000) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await database.query(
                """
                DELETE FROM analytics_events WHERE id IN (
                    SELECT id FROM analytics_events WHERE received_at < \(cutoff) ORDER BY id LIMIT \(batchSize))
                RETURNING id
                """
            ).count
            total += deleted
            if deleted < batchSize { return total }
        }
    }

    /// How many raw events are kept for the application.
    package func eventCount(applicationID: UUID) async throws -> Int {
        Int(try await database.query("SELECT COUNT(*) AS n FROM analytics_events WHERE app_id = \(applicationID)").first?.int("n") ?? 0)
    }

    struct AggregateKey: Hashable, Comparable {
        var pushID: String
        var geofenceID: Int64
        var type: String
        var hour: Int64

        static func < (a: AggregateKey, b: AggregateKey) -> Bool {
            (a.pushID, a.geofenceID, a.type, a.hour) < (b.pushID, b.geofenceID, b.type, b.hour)
        }
    }
}
