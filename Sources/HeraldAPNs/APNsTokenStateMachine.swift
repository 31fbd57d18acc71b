import HeraldCore

/// When to sign a new APNs provider token, and what a refused one means.
///
/// Apple refuses tokens older than an hour and answers `TooManyProviderTokenUpdates` to a
/// provider that changes its token more often than every 20 minutes. The machine reuses a token
/// for 50 minutes and signs a new one after that. After a `403` for the token
/// (`ExpiredProviderToken`, `InvalidProviderToken`, …) the refused requests are tried once more:
/// with a new token when the refused one is 20 minutes old or more, else with the same token
/// (Apple allows no new one yet, and a token refused that young is refused for its key, team or
/// clock, which a new signature would not change; the same token again cures a refusal APNs gave
/// by mistake). A refusal of that second try means the credentials are failing.
///
/// The token may come from another process: every process sending for a platform shares one
/// (`APNsProviderTokenStore`), so `sign` asks for a token to replace the current one, which may
/// turn out to be one another process signed meanwhile (`reuses(_:replacing:now:)`), and
/// `signed(_:issuedAt:)` records it with its own issue time.
///
/// Refusals are counted per try, not per answer: the fan-out has many batches in flight with
/// the same token, and their refusals of a token already dealt with (sent before the first
/// refusal came back, or with a token since replaced) are stale and only ask for a retry.
/// Each request's token is therefore taken as a `Lease` and reported back with it.
package struct APNsTokenStateMachine: Sendable {
    /// Reuse a token this long (seconds).
    package static let refreshAfter: Int64 = 50 * 60
    /// Never sign a new token sooner than this after the previous one (seconds).
    package static let minimumInterval: Int64 = 20 * 60

    private enum State: Sendable {
        case noToken
        case valid(token: String, issuedAt: Int64)
        /// APNs refused the token; the one more try is under way (with this token). `replaced`:
        /// the token is the refused one's replacement (signed here or by another process), not
        /// the refused one tried again.
        case rejectedOnce(token: String, issuedAt: Int64, replaced: Bool)
        /// Refused again on the second try: the credentials are wrong.
        case failing
    }

    /// What the caller should do to get a token for a request.
    package enum Action: Sendable, Equatable {
        /// Use this token.
        case use(String)
        /// Get a new token issued at this time, or another process's newer one
        /// (`reuses(_:replacing:now:)`), and report it with `signed(_:issuedAt:)`.
        case sign(issuedAt: Int64)
        /// Don't send: the platform's credentials are failing.
        case fail
    }

    /// What to do after APNs refused a request's token.
    package enum RejectionAction: Sendable, Equatable {
        /// Send the refused requests again; `nextToken(now:)` says with which token.
        case retry
        /// The credentials are failing: pause the platform (its devices and notifications are kept).
        case markFailing
    }

    /// The token a request went out with, and the try it belongs to.
    package struct Lease: Sendable, Hashable {
        package let token: String
        /// The refusals recorded when the request was sent.
        fileprivate let round: Int
    }

    private var state: State = .noToken
    /// Refusals recorded so far (stale ones not counted).
    private var refusals = 0

    package init() {}

    /// The token in use, which a new one would replace; nil before the first and once failing.
    package var token: String? {
        switch state {
        case .noToken, .failing: nil
        case .valid(let token, _), .rejectedOnce(let token, _, _): token
        }
    }

    /// Whether `stored`, the token the platform's processes share, is taken instead of signing
    /// a new one at `now` when this process replaces `replacing` (due or refused; nil: it has
    /// none): yes unless it is that very token or is itself due.
    package static func reuses(_ stored: APNsSharedProviderToken, replacing: String?, now: Int64) -> Bool {
        stored.token != replacing && now - stored.issuedAt < refreshAfter
    }

    /// The token to put in the next request at `now` (epoch seconds).
    package mutating func nextToken(now: Int64) -> Action {
        switch state {
        case .noToken:
            return .sign(issuedAt: now)
        case .valid(let token, let issuedAt):
            return now - issuedAt >= Self.refreshAfter ? .sign(issuedAt: now) : .use(token)
        case .rejectedOnce(let token, let issuedAt, let replaced):
            // A replacement is used until it is due like any token, even one another process
            // signed more than 20 minutes ago: it was not the one refused.
            return now - issuedAt >= (replaced ? Self.refreshAfter : Self.minimumInterval) ? .sign(issuedAt: now) : .use(token)
        case .failing:
            return .fail
        }
    }

    /// Records the token `sign` asked for: freshly signed, or another process's (`issuedAt` is
    /// its own issue time).
    package mutating func signed(_ token: String, issuedAt: Int64) {
        switch state {
        case .noToken, .valid:
            state = .valid(token: token, issuedAt: issuedAt)
        case .rejectedOnce:
            state = .rejectedOnce(token: token, issuedAt: issuedAt, replaced: true)
        case .failing:
            break
        }
    }

    /// The lease of a request sent now with `token` (the one `nextToken` gave or `signed` recorded).
    package func lease(_ token: String) -> Lease {
        Lease(token: token, round: refusals)
    }

    /// APNs accepted a request sent under `lease`.
    package mutating func accepted(_ lease: Lease) {
        switch state {
        case .rejectedOnce(let token, let issuedAt, _) where lease == Lease(token: token, round: refusals):
            state = .valid(token: token, issuedAt: issuedAt)
        case .noToken, .valid, .rejectedOnce, .failing:
            break
        }
    }

    /// APNs refused the token of a request sent under `lease` (403 `ExpiredProviderToken`,
    /// `InvalidProviderToken`, …) at `now` (epoch seconds).
    package mutating func rejected(_ lease: Lease, now: Int64) -> RejectionAction {
        switch state {
        case .noToken:
            return .retry
        case .valid(let token, let issuedAt):
            guard lease == Lease(token: token, round: refusals) else { return .retry }
            refusals += 1
            state = .rejectedOnce(token: token, issuedAt: issuedAt, replaced: false)
            return .retry
        case .rejectedOnce(let token, _, _):
            guard lease == Lease(token: token, round: refusals) else { return .retry }
            refusals += 1
            state = .failing
            return .markFailing
        case .failing:
            return .markFailing
        }
    }

    /// New credentials were uploaded: start over.
    package mutating func reset() {
        state = .noToken
    }
}

extension APNsTokenStateMachine.Lease: RedactingDescription {
    /// Without the token: it is a bearer credential for the key's team.
    package var description: String { "Lease(token: <redacted>, round: \(round))" }
}
