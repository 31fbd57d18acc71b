/// When to fetch a new OAuth2 access token, and what a 401 from the provider means (FCM, WNS).
///
/// A token is reused until its renewal time (`AccessTokenRenewal`); then one caller is told to
/// fetch, and the others keep using the old token while it is valid, or wait for that fetch once
/// it has expired. A 401 drops the token and one new token is fetched; if the provider refuses
/// that one too, or the token endpoint refuses the credentials, the credentials are failing and
/// nothing more is fetched.
///
/// Times are the caller's clock's instants; the machine has no clock of its own.
package struct AccessTokenStateMachine<Instant: InstantProtocol>: Sendable
where Instant: Sendable, Instant.Duration == Duration {
    /// An access token, when to renew it and when it expires.
    package struct Token: Sendable, Equatable {
        /// The bearer token.
        package var value: String
        /// From this instant on, the next caller renews it.
        package var renewAt: Instant
        /// From this instant on, it is not sent.
        package var expiresAt: Instant
    }

    private enum State: Sendable {
        /// No token. `afterRejection`: the provider refused the last one, so the next is the one refresh.
        case idle(afterRejection: Bool)
        /// One fetch, asked for at `since`, is in flight; `current` serves until it expires.
        case fetching(current: Token?, since: Instant, afterRejection: Bool)
        /// `onProbation`: fetched after the provider refused its predecessor; until the provider
        /// accepts it, a refusal means the credentials are failing.
        case valid(Token, onProbation: Bool)
        /// The credentials were refused: nothing more is fetched.
        case failing
    }

    /// What a caller that needs a token should do.
    package enum Action: Sendable, Equatable {
        /// Send with this token.
        case use(String)
        /// Ask the token endpoint (an assertion, if one is signed, issued `at` this instant), then
        /// report with `fetched`, `fetchFailed` or `fetchRefused`.
        case fetch(at: Instant)
        /// Another caller's fetch is in flight: wait for its token.
        case wait
        /// Don't send: the credentials are failing.
        case fail
    }

    /// What to do after the provider answered 401 to a request.
    package enum RejectionAction: Sendable, Equatable {
        /// Send again with a newer token (from `nextToken(now:)`).
        case retryWithNewToken
        /// A fresh token was refused too: the credentials are failing.
        case markFailing
    }

    /// When tokens are renewed.
    package let renewal: AccessTokenRenewal
    private var state = State.idle(afterRejection: false)

    package init(renewal: AccessTokenRenewal = .standard) {
        self.renewal = renewal
    }

    /// The token for a request sent at `now`.
    package mutating func nextToken(now: Instant) -> Action {
        switch state {
        case .idle(let afterRejection):
            state = .fetching(current: nil, since: now, afterRejection: afterRejection)
            return .fetch(at: now)
        case .valid(let token, _):
            if now < token.renewAt { return .use(token.value) }
            // Renewed for age: a token that lived this long without a 401 is off probation.
            state = .fetching(current: now < token.expiresAt ? token : nil, since: now, afterRejection: false)
            return .fetch(at: now)
        case .fetching(let current, _, _):
            if let current, now < current.expiresAt { return .use(current.value) }
            return .wait
        case .failing:
            return .fail
        }
    }

    /// The fetch brought a token that lives `lifetime` from when it was asked for.
    package mutating func fetched(_ value: String, lifetime: Duration) {
        switch state {
        case .fetching(_, let since, let afterRejection):
            let lifetime = max(.seconds(1), lifetime)
            let token = Token(
                value: value, renewAt: since.advanced(by: renewal.renewAfter(lifetime: lifetime)), expiresAt: since.advanced(by: lifetime))
            state = .valid(token, onProbation: afterRejection)
        case .idle, .valid, .failing:
            break
        }
    }

    /// The fetch failed for a reason that may pass (no answer, a 5xx): the next caller asks again.
    package mutating func fetchFailed() {
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

    /// The token endpoint refused the credentials (`invalid_grant`, `invalid_client`, …).
    package mutating func fetchRefused() {
        switch state {
        case .idle, .fetching, .valid, .failing:
            state = .failing
        }
    }

    /// The provider answered 401 to a request sent with `token`.
    package mutating func rejected(_ token: String) -> RejectionAction {
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

    /// The provider accepted a request sent with `token`: a token fetched after a 401 is trusted.
    package mutating func accepted(_ token: String) {
        switch state {
        case .valid(let current, true) where current.value == token:
            state = .valid(current, onProbation: false)
        case .valid, .idle, .fetching, .failing:
            break
        }
    }
}
