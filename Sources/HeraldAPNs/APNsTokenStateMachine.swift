/// When to sign a new APNs provider token.
///
/// Apple refuses tokens older than an hour and answers `TooManyProviderTokenUpdates` to a
/// provider that changes its token more often than every 20 minutes. The machine reuses a token
/// for 50 minutes, signs a new one after that, and after a `403 ExpiredProviderToken` or
/// `InvalidProviderToken` refreshes once — but never sooner than 20 minutes after the last
/// token; a second rejection means the credentials are failing.
public struct APNsTokenStateMachine: Sendable {
    /// Reuse a token this long (seconds).
    public static let refreshAfter: Int64 = 50 * 60
    /// Never sign a new token sooner than this after the previous one (seconds).
    public static let minimumInterval: Int64 = 20 * 60

    private enum State: Sendable {
        case noToken
        case valid(token: String, issuedAt: Int64)
        /// APNs rejected the token; one refresh has been spent.
        case rejectedOnce(token: String, issuedAt: Int64)
        /// Rejected again after a refresh: the credentials are wrong.
        case failing
    }

    /// What the caller should do to get a token for a request.
    public enum Action: Sendable, Equatable {
        /// Use this token.
        case use(String)
        /// Sign a new token issued at this time and report it with `signed(_:issuedAt:)`.
        case sign(issuedAt: Int64)
        /// Don't send: the platform's credentials are failing.
        case fail
    }

    /// What to do after APNs rejected the token.
    public enum RejectionAction: Sendable, Equatable {
        /// Retry with a new token: call `nextToken(now:)` again.
        case retryWithNewToken
        /// Retry later with the same token: a new one may not be signed yet.
        case retryAt(Int64)
        /// Mark the credentials failing and pause the platform.
        case markFailing
    }

    private var state: State = .noToken

    public init() {}

    /// The token to put in the next request at `now` (epoch seconds).
    public mutating func nextToken(now: Int64) -> Action {
        switch state {
        case .noToken:
            return .sign(issuedAt: now)
        case .valid(let token, let issuedAt):
            return now - issuedAt >= Self.refreshAfter ? .sign(issuedAt: now) : .use(token)
        case .rejectedOnce(let token, let issuedAt):
            return now - issuedAt >= Self.minimumInterval ? .sign(issuedAt: now) : .use(token)
        case .failing:
            return .fail
        }
    }

    /// Records a freshly signed token.
    public mutating func signed(_ token: String, issuedAt: Int64) {
        switch state {
        case .noToken, .valid:
            state = .valid(token: token, issuedAt: issuedAt)
        case .rejectedOnce:
            state = .rejectedOnce(token: token, issuedAt: issuedAt)
        case .failing:
            break
        }
    }

    /// APNs accepted a request with the current token.
    public mutating func accepted() {
        switch state {
        case .rejectedOnce(let token, let issuedAt):
            state = .valid(token: token, issuedAt: issuedAt)
        case .noToken, .valid, .failing:
            break
        }
    }

    /// APNs answered 403 with a token reason (`ExpiredProviderToken`, `InvalidProviderToken`).
    public mutating func rejected(now: Int64) -> RejectionAction {
        switch state {
        case .noToken:
            return .retryWithNewToken
        case .valid(let token, let issuedAt):
            state = .rejectedOnce(token: token, issuedAt: issuedAt)
            let earliest = issuedAt + Self.minimumInterval
            return now >= earliest ? .retryWithNewToken : .retryAt(earliest)
        case .rejectedOnce:
            state = .failing
            return .markFailing
        case .failing:
            return .markFailing
        }
    }

    /// New credentials were uploaded: start over.
    public mutating func reset() {
        state = .noToken
    }
}
