/// When to ask the token endpoint for a new WNS access token, and what a 401 from WNS means.
///
/// An access token is reused until five minutes before it expires (halfway through, for a
/// lifetime under ten minutes); then one caller is told to fetch, and the others keep using the
/// old token while it lasts, or wait for that fetch once it has expired. A 401 drops the token
/// and one new token is fetched; if WNS refuses that one too, or the token endpoint refuses the
/// package SID and secret, the credentials are failing and nothing more is fetched.
///
/// Times are epoch seconds from the caller's clock; the machine has no clock of its own.
public struct WNSTokenStateMachine: Sendable {
    /// Renew a token this long before it expires (seconds).
    public static let renewBefore: Int64 = 5 * 60

    /// An access token, when to renew it and when it expires (epoch seconds).
    public struct Token: Sendable, Equatable {
        /// The bearer token.
        public var value: String
        /// From this time on, the next caller renews it.
        public var renewAt: Int64
        /// From this time on, it is not sent.
        public var expiresAt: Int64

        public init(value: String, renewAt: Int64, expiresAt: Int64) {
            self.value = value
            self.renewAt = renewAt
            self.expiresAt = expiresAt
        }
    }

    private enum State: Sendable {
        /// No token. `afterRejection`: WNS refused the last one, so the next is the one refresh.
        case idle(afterRejection: Bool)
        /// One fetch, asked for at `since`, is in flight; `current` serves until it expires.
        case fetching(current: Token?, since: Int64, afterRejection: Bool)
        /// `onProbation`: fetched after WNS refused its predecessor; until WNS accepts it, a
        /// refusal means the credentials are failing.
        case valid(Token, onProbation: Bool)
        /// The credentials were refused: nothing more is fetched.
        case failing
    }

    /// What a caller that needs a token should do.
    public enum Action: Sendable, Equatable {
        /// Send with this token.
        case use(String)
        /// Ask the token endpoint, then report with `fetched`, `fetchFailed` or `fetchRefused`.
        case fetch
        /// Another caller's fetch is in flight: wait for its token.
        case wait
        /// Don't send: the credentials are failing.
        case fail
    }

    /// What to do after WNS answered 401 to a notification.
    public enum RejectionAction: Sendable, Equatable {
        /// Send again with a newer token (from `nextToken(now:)`).
        case retryWithNewToken
        /// A fresh token was refused too: the credentials are failing.
        case markFailing
    }

    private var state = State.idle(afterRejection: false)

    public init() {}

    /// The token for a notification sent at `now`.
    public mutating func nextToken(now: Int64) -> Action {
        switch state {
        case .idle(let afterRejection):
            state = .fetching(current: nil, since: now, afterRejection: afterRejection)
            return .fetch
        case .valid(let token, _):
            if now < token.renewAt { return .use(token.value) }
            // Renewed for age: a token that lived this long without a 401 is off probation.
            state = .fetching(current: now < token.expiresAt ? token : nil, since: now, afterRejection: false)
            return .fetch
        case .fetching(let current, _, _):
            if let current, now < current.expiresAt { return .use(current.value) }
            return .wait
        case .failing:
            return .fail
        }
    }

    /// The fetch brought a token that lives `expiresIn` seconds from when it was asked for.
    public mutating func fetched(_ value: String, expiresIn: Int64) {
        switch state {
        case .fetching(_, let since, let afterRejection):
            let lifetime = max(1, expiresIn)
            let renewAt = since + max(lifetime / 2, lifetime - Self.renewBefore)
            state = .valid(Token(value: value, renewAt: renewAt, expiresAt: since + lifetime), onProbation: afterRejection)
        case .idle, .valid, .failing:
            break
        }
    }

    /// The fetch failed for a reason that may pass (no answer, a 5xx): the next caller asks again.
    public mutating func fetchFailed() {
        switch state {
        case .fetching(let current?, _, let afterRejection):
            // Renewed early, so asked again at once; the old token serves meanwhile.
            state = .valid(current, onProbation: afterRejection)
        case .fetching(nil, _, let afterRejection):
            state = .idle(afterRejection: afterRejection)
        case .idle, .valid, .failing:
            break
        }
    }

    /// The token endpoint refused the package SID and secret (`invalid_client`, …).
    public mutating func fetchRefused() {
        switch state {
        case .idle, .fetching, .valid, .failing:
            state = .failing
        }
    }

    /// WNS answered 401 to a notification sent with `token`.
    public mutating func rejected(_ token: String) -> RejectionAction {
        switch state {
        case .valid(let current, let onProbation):
            // An older token was refused: the current one is newer, try that.
            guard current.value == token else { return .retryWithNewToken }
            if onProbation {
                state = .failing
                return .markFailing
            }
            state = .idle(afterRejection: true)
            return .retryWithNewToken
        case .fetching(let current, let since, let afterRejection):
            guard let current, current.value == token else { return .retryWithNewToken }
            if afterRejection {
                state = .failing
                return .markFailing
            }
            state = .fetching(current: nil, since: since, afterRejection: true)
            return .retryWithNewToken
        case .idle:
            return .retryWithNewToken
        case .failing:
            return .markFailing
        }
    }

    /// WNS accepted a notification sent with `token`: a token fetched after a 401 is trusted.
    public mutating func accepted(_ token: String) {
        switch state {
        case .valid(let current, true) where current.value == token:
            state = .valid(current, onProbation: false)
        case .valid, .idle, .fetching, .failing:
            break
        }
    }
}
