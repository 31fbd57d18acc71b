/// How long raw analytics events are kept; the hourly aggregates are kept for ever.
public struct AnalyticsConfiguration: Sendable, Equatable {
    /// Days a raw event is kept after it was received.
    public var retentionDays: Int
    /// How often the cleanup runs.
    public var cleanupInterval: Duration

    public init(retentionDays: Int = 30, cleanupInterval: Duration = .seconds(3600)) {
        self.retentionDays = retentionDays
        self.cleanupInterval = cleanupInterval
    }

    /// The receive time before which events are deleted at `now` (epoch ms).
    public func cutoff(now: Int64) -> Int64 {
        now - Int64(max(0, retentionDays)) * 86_400_000
    }
}
