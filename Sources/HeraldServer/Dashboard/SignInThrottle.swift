import Synchronization

/// Slows guessing of admin tokens on the dashboard's sign-in: each client (by address) has
/// `attempts` wrong tokens per `window`; past that its sign-ins are refused until the window
/// that began with its first failure ends. A right token does not clear the count, so a
/// guesser cannot reset it by signing in with a token of its own.
final class SignInThrottle: Sendable {
    /// What to do with a sign-in attempt.
    enum Decision: Equatable, Sendable {
        case allow
        /// Refuse; the client may try again after this many milliseconds.
        case refuse(retryAfter: Int64)
    }

    /// One client's failures in its current window.
    struct Window: Sendable {
        var start: Int64
        var failures: Int
    }

    let attempts: Int
    let window: Duration
    /// At most this many clients are remembered; past it, windows that ended are forgotten
    /// and then the oldest.
    let capacity: Int
    private let now: @Sendable () -> Int64
    private let windows = Mutex<[String: Window]>([:])

    init(attempts: Int = 5, window: Duration = .seconds(60), capacity: Int = 10_000, now: @escaping @Sendable () -> Int64) {
        self.attempts = attempts
        self.window = window
        self.capacity = capacity
        self.now = now
    }

    /// Whether `client` may try a token now.
    func check(_ client: String) -> Decision {
        let time = now()
        let length = window.milliseconds
        return windows.withLock { windows in
            guard let current = windows[client] else { return .allow }
            if time - current.start >= length {
                windows[client] = nil
                return .allow
            }
            return current.failures >= attempts ? .refuse(retryAfter: current.start + length - time) : .allow
        }
    }

    /// Counts a wrong token from `client`.
    func failed(_ client: String) {
        let time = now()
        let length = window.milliseconds
        windows.withLock { windows in
            if var current = windows[client], time - current.start < length {
                current.failures += 1
                windows[client] = current
                return
            }
            if windows.count >= capacity {
                windows = windows.filter { time - $0.value.start < length }
                if windows.count >= capacity, let oldest = windows.min(by: { $0.value.start < $1.value.start }) {
                    windows[oldest.key] = nil
                }
            }
            windows[client] = Window(start: time, failures: 1)
        }
    }
}
