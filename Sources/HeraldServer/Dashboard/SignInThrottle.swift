import HeraldCore

/// Slows guessing of admin tokens on the dashboard's sign-in: each client (by address) has
/// `attempts` wrong tokens per `window`; past that its sign-ins are refused until the window
/// that began with its first failure ends. A right token does not clear the count, so a
/// guesser cannot reset it by signing in with a token of its own.
final class SignInThrottle: Sendable {
    /// What to do with a sign-in attempt.
    enum Decision: Equatable, Sendable {
        case allow
        /// Refuse; the client may try again after this long.
        case refuse(retryAfter: Duration)
    }

    let attempts: Int
    let window: Duration
    private let clock: EpochClock
    /// Each client's failures in its current window, which expires when the window ends; at most
    /// `capacity` clients are remembered (past it, windows that ended go, then the oldest).
    private let windows: ExpiringMap<String, Int>

    init(attempts: Int = 5, window: Duration = .seconds(60), capacity: Int = 10_000, clock: EpochClock) {
        self.attempts = attempts
        self.window = window
        windows = ExpiringMap(capacity: capacity)
        self.clock = clock
    }

    /// Whether `client` may try a token now.
    func check(_ client: String) -> Decision {
        let time = clock.now
        guard let current = windows.entry(client, at: time), current.value >= attempts else { return .allow }
        return .refuse(retryAfter: time.duration(to: current.expiresAt))
    }

    /// Counts a wrong token from `client`.
    func failed(_ client: String) {
        let time = clock.now
        windows.modify(client, at: time) { current in
            if current != nil {
                current?.value += 1
            } else {
                current = .init(value: 1, expiresAt: time.advanced(by: window))
            }
        }
    }
}
