/// How long raw analytics events are kept; the hourly aggregates are kept for ever.
package struct AnalyticsConfiguration: Sendable, Equatable {
    /// Days a raw event is kept after it was received.
    package var retentionDays: Int
    /// How often the cleanup runs.
    package var cleanupInterval: Duration

    package init(retentionDays: Int = 30, cleanupInterval: Duration = .seconds(3600)) {
        self.retentionDays = retentionDays
        self.cleanupInterval = cleanupInterval
    }

    /// The receive time before which events are deleted at `now` (epoch ms).
    package func cutoff(now: Int64) -> Int64 {
        now - Int64(max(0, retentionDays)) * 86_400_000
    }
}
