import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore

/// OAuth access tokens for one Windows app (package SID and secret): asks the token endpoint
/// with the client-credentials grant, caches the token and renews it before it expires, with at
/// most one request in flight however many senders ask (`WNSTokenStateMachine` decides; this
/// actor does the I/O).
public actor WNSAccessTokenProvider {
    /// Microsoft's token endpoint for WNS.
    public static let defaultTokenEndpoint = "https://login.live.com/accesstoken.srf"
    /// The scope WNS tokens are asked for.
    public static let scope = "notify.windows.com"
    /// The lifetime assumed when the endpoint states no `expires_in` (seconds).
    static let assumedLifetime: Int64 = 3600

    /// What the token endpoint granted.
    struct Grant: Sendable {
        var accessToken: String
        /// Seconds from the request.
        var expiresIn: Int64
    }

    /// Asks the endpoint for a grant; throws `WNSTokenError` for an answer that is not one.
    typealias Exchange = @Sendable () async throws -> Grant

    private let exchange: Exchange
    private let now: @Sendable () -> Int64
    private var machine = WNSTokenStateMachine()
    /// The request in flight, awaited by every caller that needs a token meanwhile.
    private var inFlight: Task<String, any Error>?
    /// Why the credentials are failing, once they are.
    private var failure: WNSTokenError?
    /// How many requests were made to the token endpoint (for tests and metrics).
    public private(set) var exchanges = 0

    /// - Parameters:
    ///   - tokenEndpoint: Microsoft's, or a test server's.
    ///   - httpClient: the client to reach it with.
    ///   - now: the clock, epoch seconds.
    public init(
        credentials: WNSCredentials, tokenEndpoint: String = WNSAccessTokenProvider.defaultTokenEndpoint, httpClient: HTTPClient,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) {
        self.init(now: now) {
            try await Self.exchange(credentials, at: tokenEndpoint, httpClient: httpClient, now: now)
        }
    }

    init(now: @escaping @Sendable () -> Int64, exchange: @escaping Exchange) {
        self.now = now
        self.exchange = exchange
    }

    /// A token to send with: the cached one, or the one a (shared) request brings.
    ///
    /// Throws `WNSTokenError` when the endpoint refuses or fails, or the credentials are
    /// failing; network errors as they come.
    public func token() async throws -> String {
        switch machine.nextToken(now: now()) {
        case .use(let token):
            return token
        case .fetch:
            // Unstructured, so that a caller cancelled meanwhile does not cancel the others' token.
            let task = Task { try await self.fetch() }
            inFlight = task
            return try await task.value
        case .wait:
            guard let inFlight else {
                throw WNSTokenError(reason: .unavailable, status: nil, message: "no token request in flight")
            }
            return try await inFlight.value
        case .fail:
            throw failure ?? WNSTokenError(reason: .failing, status: nil, message: "the credentials were refused")
        }
    }

    /// WNS answered 401 to a notification sent with `token`: drop it and fetch one more, or, if
    /// that was the fresh one, give up (`markFailing`; `token()` throws from then on).
    public func rejected(_ token: String, status: Int, message: String) -> WNSTokenStateMachine.RejectionAction {
        let action = machine.rejected(token)
        switch action {
        case .retryWithNewToken:
            break
        case .markFailing:
            if failure == nil {
                failure = WNSTokenError(reason: .failing, status: status, message: "WNS refused a freshly fetched access token: \(message)")
            }
        }
        return action
    }

    /// WNS accepted a notification sent with `token`.
    public func accepted(_ token: String) {
        machine.accepted(token)
    }

    private func fetch() async throws -> String {
        defer { inFlight = nil }
        exchanges += 1
        do {
            let grant = try await exchange()
            machine.fetched(grant.accessToken, expiresIn: grant.expiresIn)
            return grant.accessToken
        } catch let error as WNSTokenError where error.meansCredentialsRejected {
            machine.fetchRefused()
            failure = error
            throw error
        } catch {
            machine.fetchFailed()
            throw error
        }
    }

    // MARK: The request over HTTP

    static func exchange(_ credentials: WNSCredentials, at tokenEndpoint: String, httpClient: HTTPClient, now: () -> Int64) async throws
        -> Grant
    {
        switch try await OAuthTokenEndpoint.request(form(credentials), at: tokenEndpoint, httpClient: httpClient, now: now) {
        case .granted(let accessToken, let expiresIn):
            return Grant(accessToken: accessToken, expiresIn: max(1, expiresIn ?? assumedLifetime))
        case .refused(let status, let error, let description):
            throw WNSTokenError(reason: .refused(error), status: status, message: description)
        case .unavailable(let status, let description, let retryAfter):
            throw WNSTokenError(reason: .unavailable, status: status, message: description, retryAfter: retryAfter)
        }
    }

    /// The client-credentials request's fields.
    static func form(_ credentials: WNSCredentials) -> [(String, String)] {
        [
            ("grant_type", "client_credentials"), ("client_id", credentials.clientID), ("client_secret", credentials.clientSecret),
            ("scope", scope),
        ]
    }
}
