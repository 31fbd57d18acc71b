import HeraldCore

/// OAuth2 access tokens for one set of provider credentials (an FCM service account, a WNS
/// package SID and secret): asks the token endpoint through `exchange`, caches the token and
/// renews it ahead of expiry, with at most one request in flight however many senders ask.
/// `AccessTokenStateMachine` decides; this actor does the I/O.
///
/// `FCMAccessTokenProvider` and `WNSAccessTokenProvider` are this actor with their provider's
/// exchange; `send(count:noToken:gaveUp:_:)` is the one "refresh once on 401, then fail" path.
package actor AccessTokenProvider<Source: AccessTokenSource> {
    /// What the token endpoint granted.
    package struct Grant: Sendable {
        package var accessToken: String
        /// From when it was asked for.
        package var lifetime: Duration

        package init(accessToken: String, lifetime: Duration) {
            self.accessToken = accessToken
            self.lifetime = lifetime
        }
    }

    /// Asks the token endpoint for a grant, with an assertion issued at `issuedAt` if the
    /// provider signs one; throws `AccessTokenError` for an answer that is not a grant.
    package typealias Exchange = @Sendable (_ issuedAt: EpochClock.Instant) async throws -> Grant

    private let exchange: Exchange
    private let clock: EpochClock
    private var machine: AccessTokenStateMachine<EpochClock.Instant>
    /// The request in flight, awaited by every caller that needs a token meanwhile.
    private var inFlight: Task<String, any Error>?
    /// Why the credentials are failing, once they are.
    private var failure: AccessTokenError<Source>?
    /// How many requests were made to the token endpoint (for tests and metrics).
    public private(set) var exchanges = 0

    /// - Parameters:
    ///   - renewal: when a token is renewed.
    ///   - clock: the wall clock (token lifetimes, an assertion's issue time).
    ///   - exchange: the request to the provider's token endpoint.
    package init(renewal: AccessTokenRenewal = .standard, clock: EpochClock = .system, exchange: @escaping Exchange) {
        self.machine = AccessTokenStateMachine(renewal: renewal)
        self.clock = clock
        self.exchange = exchange
    }

    /// A token to send with: the cached one, or the one a (shared) request brings.
    ///
    /// Throws `AccessTokenError` when the endpoint refuses or fails, or the credentials are
    /// failing; network errors as they come.
    package func token() async throws -> String {
        switch machine.nextToken(now: clock.now) {
        case .use(let token):
            return token
        case .fetch(let issuedAt):
            // Unstructured, so that a caller cancelled meanwhile does not cancel the others' token.
            let task = Task { try await self.fetch(issuedAt: issuedAt) }
            inFlight = task
            return try await task.value
        case .wait:
            guard let inFlight else {
                throw AccessTokenError<Source>(reason: .unavailable, status: nil, message: "no token request in flight")
            }
            return try await inFlight.value
        case .fail:
            throw failure ?? AccessTokenError<Source>(reason: .failing, status: nil, message: "the credentials were refused")
        }
    }

    /// The provider answered 401 to a request sent with `token`: drop it and fetch one more, or,
    /// if that was the fresh one, give up (`markFailing`; `token()` throws from then on).
    package func rejected(_ token: String, status: Int, message: String) -> AccessTokenStateMachine<EpochClock.Instant>.RejectionAction {
        let action = machine.rejected(token)
        switch action {
        case .retryWithNewToken:
            break
        case .markFailing:
            if failure == nil {
                failure = AccessTokenError(
                    reason: .failing, status: status, message: "\(Source.provider) refused a freshly fetched access token: \(message)")
            }
        }
        return action
    }

    /// The provider accepted a request sent with `token`.
    package func accepted(_ token: String) {
        machine.accepted(token)
    }

    private func fetch(issuedAt: EpochClock.Instant) async throws -> String {
        defer { inFlight = nil }
        exchanges += 1
        do {
            let grant = try await exchange(issuedAt)
            machine.fetched(grant.accessToken, lifetime: grant.lifetime)
            return grant.accessToken
        } catch let error as AccessTokenError<Source> where error.meansCredentialsRejected {
            machine.fetchRefused()
            failure = error
            throw error
        } catch {
            machine.fetchFailed()
            throw error
        }
    }
}
