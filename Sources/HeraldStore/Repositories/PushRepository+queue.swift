/// The delivery queue at a glance, for metrics.
package struct QueueStatus: Sendable, Equatable {
    /// Jobs due now (ready) or being worked (claimed).
    package var depth: Int
    /// How long the oldest due job has waited past its due time (ms); 0 when none waits.
    package var oldestWait: Int64
}

extension PushRepository {
    /// How many jobs are due or in hand, and how long the oldest due one has waited.
    package func queueStatus() async throws -> QueueStatus {
        let time = clock.now.epochMilliseconds
        let rows = try await database.query(
            """
            SELECT COUNT(*) AS n, MIN(CASE WHEN state = 'ready' THEN available_at END) AS oldest FROM push_jobs
            WHERE (state = 'ready' AND available_at <= \(time)) OR state = 'claimed'
            """)
        let depth = try rows.first?.int("n") ?? 0
        let oldest = try rows.first?.optionalInt("oldest")
        return QueueStatus(depth: Int(depth), oldestWait: oldest.map { max(0, time - $0) } ?? 0)
    }
}
