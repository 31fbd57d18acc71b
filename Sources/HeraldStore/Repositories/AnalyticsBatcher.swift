import HeraldCore
import Synchronization
import struct Foundation.UUID

/// Writes concurrent analytics batches together: while one transaction is being written,
/// arriving batches wait, and the next transaction stores them all with one multi-row insert of
/// the events and one upsert of their summed hourly aggregates.
///
/// Devices of one app report on the same few pushes in the same hour, so concurrent batches
/// update the same aggregate rows; written one transaction each, they queue on those rows' locks
/// and pay a commit (an fsync) apiece. Together they pay one. A batch returns only after the
/// transaction that holds it committed; if a combined transaction fails, its batches are written
/// one by one, so that each caller gets its own outcome (a batch stays all or nothing).
final class AnalyticsBatcher: Sendable {
    /// The most events one transaction writes.
    static let maximumEvents = 5000
    /// How long a small queue waits for more batches.
    static let linger = Duration.microseconds(500)
    /// Queues of fewer batches than this wait `linger` first.
    static let lingerBelow = 4

    struct Request: Sendable {
        let events: [AnalyticsEvent]
        let applicationID: UUID
        let platformID: UUID
        let time: Int64
        let complete: @Sendable (Result<Void, any Error>) -> Void
    }

    private struct Queue {
        var pending: [Request] = []
        var draining = false
    }

    private let database: any SQLDatabase
    private let queue = Mutex(Queue())

    init(database: any SQLDatabase) {
        self.database = database
    }

    /// Stores one batch, in a transaction with whatever else arrives meanwhile.
    func record(_ events: [AnalyticsEvent], applicationID: UUID, platformID: UUID, time: Int64) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let request = Request(
                events: events, applicationID: applicationID, platformID: platformID, time: time,
                complete: { continuation.resume(with: $0) })
            let startDrain = queue.withLock { queue -> Bool in
                queue.pending.append(request)
                guard !queue.draining else { return false }
                queue.draining = true
                return true
            }
            if startDrain {
                Task(executorPreference: database.writeExecutor) { await self.drain() }
            }
        }
    }

    private func drain() async {
        while true {
            if queue.withLock({ $0.pending.count }) < Self.lingerBelow {
                try? await Task.sleep(for: Self.linger)
            }
            let batch = queue.withLock { queue -> [Request] in
                var events = 0
                var taken = 0
                for request in queue.pending {
                    // The first always goes, however large; the others while they fit.
                    if taken > 0 && events + request.events.count > Self.maximumEvents { break }
                    events += request.events.count
                    taken += 1
                }
                let batch = Array(queue.pending.prefix(taken))
                queue.pending.removeFirst(taken)
                if batch.isEmpty { queue.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                try await database.transaction { connection in
                    try await Self.write(batch, on: connection)
                }
                for request in batch { request.complete(.success(())) }
            } catch {
                for request in batch {
                    do {
                        try await database.transaction { connection in
                            try await Self.write([request], on: connection)
                        }
                        request.complete(.success(()))
                    } catch {
                        request.complete(.failure(error))
                    }
                }
            }
        }
    }

    /// Inserts every batch's events and adds them to the hourly aggregates.
    static func write(_ batch: [Request], on connection: any SQLExecutor) async throws {
        var rows: [(Request, AnalyticsEvent)] = []
        var aggregates: [AnalyticsRepository.AggregateKey: Int] = [:]
        for request in batch {
            for event in request.events {
                rows.append((request, event))
                let key = AnalyticsRepository.AggregateKey(
                    applicationID: request.applicationID, pushID: event.receiptID ?? "",
                    geofenceID: event.geofenceID.flatMap { Int64($0) } ?? 0, type: event.type, hour: event.hour)
                aggregates[key, default: 0] += 1
            }
        }
        let step = AnalyticsRepository.rowsPerStatement
        for start in stride(from: 0, to: rows.count, by: step) {
            var sql: SQL = """
                INSERT INTO analytics_events (app_id, platform_id, event_type, event_time, received_at, receipt_id, device_uuid,
                    geofence_id, location_id, sdk_version, platform_type) VALUES
                """
            for (index, (request, event)) in rows[start..<min(start + step, rows.count)].enumerated() {
                sql.append(index == 0 ? " (" : ", (")
                sql.append("""
                    \(request.applicationID), \(request.platformID), \(event.type), \(event.time), \(request.time), \(event.receiptID),
                    \(event.deviceUUID), \(event.geofenceID), \(event.locationID), \(event.sdkVersion), \(event.platformType))
                    """)
            }
            try await connection.query(sql)
        }
        // A fixed order of upserts: concurrent writers on PostgreSQL lock shared rows in the same order.
        let keys = aggregates.keys.sorted()
        for start in stride(from: 0, to: keys.count, by: step) {
            var sql: SQL = "INSERT INTO analytics_hourly (app_id, push_id, geofence_id, event_type, hour, count) VALUES "
            for (index, key) in keys[start..<min(start + step, keys.count)].enumerated() {
                sql.append(index == 0 ? "(" : ", (")
                sql.append("\(key.applicationID), \(key.pushID), \(key.geofenceID), \(key.type), \(key.hour), \(aggregates[key] ?? 0))")
            }
            sql.append("""
                 ON CONFLICT (app_id, push_id, geofence_id, event_type, hour)
                DO UPDATE SET count = analytics_hourly.count + excluded.count
                """)
            try await connection.query(sql)
        }
    }
}
