import HeraldCore
import Synchronization

/// Slows wrong admin tokens on the dashboard's sign-in, and never refuses a right one.
///
/// Each client (by address) may send `attempts` wrong tokens per `window`, and all clients
/// together `globalAttempts`; past either, wrong tokens are answered 429 for a while, which
/// doubles (up to `maximumBlock`) each time the same client, or everyone, goes past it again
/// before its record expires. A right token is checked like any other and always signs in: behind
/// a reverse proxy every operator has the proxy's address, and a guesser there must not lock
/// them out. (Admin tokens are 256-bit random secrets, which no rate of guessing finds; the throttle
/// keeps a guesser's noise and load bounded.)
final class SignInThrottle: Sendable {
    /// What to answer a wrong token.
    enum Decision: Equatable, Sendable {
        /// 401: the token was not accepted.
        case allow
        /// 429: too many wrong tokens; the client may try again after this long.
        case refuse(retryAfter: Duration)
    }

    /// One client's (or everyone's) wrong tokens.
    struct Record: Sendable {
        /// Wrong tokens in the current window.
        var failures = 0
        var windowEnds: EpochClock.Instant
        /// How many times the limit was passed while this record lived (the backoff's exponent).
        var strikes = 0
        /// Wrong tokens are refused until then.
        var blockedUntil: EpochClock.Instant?

        /// Counts a wrong token at `time`: refused while blocked; the one that reaches `attempts`
        /// starts a block of `window` doubled per earlier strike, at most `maximum`.
        mutating func fail(at time: EpochClock.Instant, attempts: Int, window: Duration, maximum: Duration) -> Decision {
            if let blockedUntil, time < blockedUntil { return .refuse(retryAfter: time.duration(to: blockedUntil)) }
            if time >= windowEnds {
                failures = 0
                windowEnds = time.advanced(by: window)
            }
            failures += 1
            if failures >= attempts {
                let block = min(window * (1 << min(strikes, 20)), maximum)
                strikes += 1
                failures = 0
                blockedUntil = time.advanced(by: block)
                windowEnds = time.advanced(by: block)
            }
            return .allow
        }

        /// Until when the record matters: its block or window, and as long again for its strikes.
        func expiry(maximum: Duration) -> EpochClock.Instant {
            max(windowEnds, blockedUntil ?? windowEnds).advanced(by: maximum)
        }
    }

    let attempts: Int
    let globalAttempts: Int
    let window: Duration
    let maximumBlock: Duration
    private let clock: EpochClock
    /// Each client's record; at most `capacity` clients are remembered (past it, expired
    /// records go, then the one closest to expiry).
    private let clients: ExpiringMap<String, Record>
    private let everyone: Mutex<Record>

    init(
        attempts: Int = 5, globalAttempts: Int = 100, window: Duration = .seconds(60), maximumBlock: Duration = .seconds(3600),
        capacity: Int = 10_000, clock: EpochClock
    ) {
        self.attempts = attempts
        self.globalAttempts = globalAttempts
        self.window = window
        self.maximumBlock = maximumBlock
        clients = ExpiringMap(capacity: capacity)
        everyone = Mutex(Record(windowEnds: clock.now))
        self.clock = clock
    }

    /// Counts a wrong token from `client`; what to answer it.
    func failed(_ client: String) -> Decision {
        let time = clock.now
        let mine = clients.modify(client, at: time) { entry in
            var record = entry?.value ?? Record(windowEnds: time)
            let decision = record.fail(at: time, attempts: attempts, window: window, maximum: maximumBlock)
            entry = .init(value: record, expiresAt: record.expiry(maximum: maximumBlock))
            return decision
        }
        // A client already refused is not counted against everyone.
        if case .refuse = mine { return mine }
        return everyone.withLock { $0.fail(at: time, attempts: globalAttempts, window: window, maximum: maximumBlock) }
    }
}
