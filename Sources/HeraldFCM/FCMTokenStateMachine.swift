/// When to fetch a new OAuth2 access token for FCM, and what a 401 means.
///
/// Google's access tokens live about an hour (`expires_in`). The machine reuses one until five
/// minutes before it expires, then asks for one fetch; while that fetch is in flight the old
/// token, still valid, keeps being used, and once it has expired callers wait for the fetch
/// instead of starting their own. When FCM answers 401 the token is dropped and one new token
/// is fetched; if FCM refuses that one too, or the token endpoint refuses the service account,
/// the credentials are failing and no more tokens are fetched.
public struct FCMTokenStateMachine: Sendable {
    /// Renew a token this long before it expires (seconds).
    public static let renewBefore: Int64 = 5 * 60

    /// An access token and when it expires (epoch seconds).
    public struct Token: Sendable, Equatable {
        public var value: String
        public var expiresAt: Int64

        public init(value: String, expiresAt: Int64) {
            self.value = value
            self.expiresAt = expiresAt
        }
    }

    private enum State: Sendable {
        /// Nothing usable. `afterRejection`: FCM refused the last token, so the next one is the one refresh.
        case noToken(afterRejection: Bool)
        /// One fetch is in flight; `current`, while it has not expired, is used meanwhile.
        case fetching(current: Token?, afterRejection: Bool)
        /// `afterRejection`: fetched because FCM refused the one before; until FCM accepts it, a
        /// refusal means the credentials are failing.
        case valid(Token, afterRejection: Bool)
        /// The credentials were refused: nothing more is fetched.
        case failing
    }

    /// What a caller that needs a token should do.
    public enum Action: Sendable, Equatable {
        /// Use this token.
        case use(String)
        /// Fetch a token with an assertion issued at this time (epoch seconds), then report it
        /// with `fetched`, `fetchFailed` or `fetchRefused`.
        case fetch(issuedAt: Int64)
        /// Another caller's fetch is in flight: wait for its token.
        case wait
        /// Don't send: the credentials are failing.
        case fail
    }

    /// What to do after FCM answered 401 to a request.
    public enum RejectionAction: Sendable, Equatable {
        /// Send again with a newer token (from `nextToken(now:)`).
        case retryWithNewToken
        /// A fresh token was refused too: mark the credentials failing.
        case markFailing
    }

    private var state: State = .noToken(afterRejection: false)

    public init() {}

    /// The token for a request at `now` (epoch seconds).
    public mutating func nextToken(now: Int64) -> Action {
        switch state {
        case .noToken(let afterRejection):
            state = .fetching(current: nil, afterRejection: afterRejection)
            return .fetch(issuedAt: now)
        case .valid(let token, _):
            if now < token.expiresAt - Self.renewBefore { return .use(token.value) }
            // Renewed for age: a token that lived this long is no longer on probation.
            state = .fetching(current: now < token.expiresAt ? token : nil, afterRejection: false)
            return .fetch(issuedAt: now)
        case .fetching(let current, _):
            if let current, now < current.expiresAt { return .use(current.value) }
            return .wait
        case .failing:
            return .fail
        }
    }

    /// The fetch returned a token that expires at `expiresAt` (epoch seconds).
    public mutating func fetched(_ value: String, expiresAt: Int64) {
        switch state {
        case .fetching(_, let afterRejection):
            state = .valid(Token(value: value, expiresAt: expiresAt), afterRejection: afterRejection)
        case .noToken, .valid, .failing:
            break
        }
    }

    /// The fetch failed for a reason that may pass (a network error, a 5xx): ask again next time.
    public mutating func fetchFailed() {
        switch state {
        case .fetching(let current, let afterRejection):
            if let current {
                state = .valid(current, afterRejection: afterRejection)
            } else {
                state = .noToken(afterRejection: afterRejection)
            }
        case .noToken, .valid, .failing:
            break
        }
    }

    /// The token endpoint refused the service account (an OAuth2 error such as `invalid_grant`).
    public mutating func fetchRefused() {
        switch state {
        case .noToken, .fetching, .valid, .failing:
            state = .failing
        }
    }

    /// FCM answered 401 to a request sent with `token`.
    public mutating func rejected(_ token: String) -> RejectionAction {
        switch state {
        case .valid(let current, let afterRejection):
            // An older token: the current one is newer, try that.
            guard current.value == token else { return .retryWithNewToken }
            if afterRejection {
                state = .failing
                return .markFailing
            }
            state = .noToken(afterRejection: true)
            return .retryWithNewToken
        case .fetching(let current, let afterRejection):
            guard let current, current.value == token else { return .retryWithNewToken }
            if afterRejection {
                state = .failing
                return .markFailing
            }
            state = .fetching(current: nil, afterRejection: true)
            return .retryWithNewToken
        case .noToken:
            return .retryWithNewToken
        case .failing:
            return .markFailing
        }
    }

    /// FCM accepted a request sent with `token`: a token fetched after a 401 is trusted again.
    public mutating func accepted(_ token: String) {
        switch state {
        case .valid(let current, let afterRejection):
            if afterRejection && current.value == token {
                state = .valid(current, afterRejection: false)
            }
        case .noToken, .fetching, .failing:
            break
        }
    }
}
