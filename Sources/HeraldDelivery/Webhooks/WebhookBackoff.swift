import HeraldCore

/// When a failed webhook delivery is tried again: exponential backoff with jitter, within a window.
struct WebhookBackoff: Sendable {
    var first: Duration
    var maximum: Duration
    var window: Duration

    /// The next attempt's time after `attempts` failed ones (this one included), or nil when it
    /// would fall after the window that began at `createdAt` (epoch ms): the delivery has failed.
    func retryAt(attempts: Int, createdAt: Int64, now: Int64) -> Int64? {
        let delay = Self.delay(attempts: attempts, first: first, maximum: maximum)
        let next = now + delay.milliseconds
        return next <= createdAt + window.milliseconds ? next : nil
    }

    /// About `first` after the first failure, twice that after the second, …, at most `maximum`:
    /// between half of that and all of it (jitter, so that receivers coming back are not hit by
    /// every retry at once).
    static func delay(attempts: Int, first: Duration, maximum: Duration) -> Duration {
        let base = min(maximum.milliseconds, max(2, first.milliseconds) * (Int64(1) << min(max(attempts - 1, 0), 30)))
        return .milliseconds(base / 2 + Int64.random(in: 0...(base / 2)))
    }
}
