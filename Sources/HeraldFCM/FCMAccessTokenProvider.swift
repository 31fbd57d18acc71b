import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore

/// OAuth2 access tokens for one service account: exchanges a signed assertion at the account's
/// `token_uri`, caches the token and renews it five minutes before it expires, with at most one
/// exchange in flight however many senders ask (`FCMTokenStateMachine` decides; this actor
/// does the I/O).
public actor FCMAccessTokenProvider {
    /// What the token endpoint granted.
    struct Grant: Sendable {
        var accessToken: String
        /// Seconds from the request.
        var expiresIn: Int64
    }

    /// Exchanges an assertion for a grant; throws `FCMTokenError` for an answer that is not one.
    typealias Exchange = @Sendable (_ assertion: String) async throws -> Grant

    private let signer: FCMAssertionSigner
    private let exchange: Exchange
    private let now: @Sendable () -> Int64
    private var machine = FCMTokenStateMachine()
    /// The exchange in flight, awaited by every caller that needs a token meanwhile.
    private var inFlight: Task<String, any Error>?
    /// Why the credentials are failing, once they are.
    private var failure: FCMTokenError?
    /// How many exchanges were started (for tests and metrics).
    public private(set) var exchanges = 0

    /// - Parameters:
    ///   - httpClient: the client to reach `credentials.tokenURI` with.
    ///   - now: the clock, epoch seconds.
    public init(
        credentials: FCMCredentials, httpClient: HTTPClient,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) throws {
        let tokenURI = credentials.tokenURI
        try self.init(credentials: credentials, now: now) { assertion in
            try await Self.exchange(assertion, at: tokenURI, httpClient: httpClient, now: now)
        }
    }

    init(credentials: FCMCredentials, now: @escaping @Sendable () -> Int64, exchange: @escaping Exchange) throws {
        self.signer = try FCMAssertionSigner(credentials: credentials)
        self.now = now
        self.exchange = exchange
    }

    /// A token to send with: the cached one, or the one a (shared) exchange brings.
    ///
    /// Throws `FCMTokenError` when the endpoint refuses or fails, or the credentials are failing;
    /// network errors as they come.
    public func token() async throws -> String {
        switch machine.nextToken(now: now()) {
        case .use(let token):
            return token
        case .fetch(let issuedAt):
            let task = Task { try await self.fetch(issuedAt: issuedAt) }
            inFlight = task
            return try await task.value
        case .wait:
            guard let inFlight else {
                throw FCMTokenError(reason: .unavailable, status: nil, message: "no exchange in flight")
            }
            return try await inFlight.value
        case .fail:
            throw failure ?? FCMTokenError(reason: .failing, status: nil, message: "the credentials were refused")
        }
    }

    /// FCM answered 401 to a request sent with `token`: drop it and fetch one more, or, if that
    /// was the fresh one, give up (`markFailing`; `token()` throws from then on).
    public func rejected(_ token: String, status: Int, message: String) -> FCMTokenStateMachine.RejectionAction {
        let action = machine.rejected(token)
        switch action {
        case .retryWithNewToken:
            break
        case .markFailing:
            if failure == nil {
                failure = FCMTokenError(
                    reason: .failing, status: status, message: "FCM refused a freshly fetched access token: \(message)")
            }
        }
        return action
    }

    /// FCM accepted a request sent with `token`.
    public func accepted(_ token: String) {
        machine.accepted(token)
    }

    private func fetch(issuedAt: Int64) async throws -> String {
        defer { inFlight = nil }
        exchanges += 1
        do {
            let grant = try await exchange(try signer.assertion(issuedAt: issuedAt))
            machine.fetched(grant.accessToken, expiresAt: issuedAt + grant.expiresIn)
            return grant.accessToken
        } catch let error as FCMTokenError where error.meansCredentialsRejected {
            machine.fetchRefused()
            failure = error
            throw error
        } catch {
            machine.fetchFailed()
            throw error
        }
    }

    // MARK: The exchange over HTTP

    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    static func exchange(_ assertion: String, at tokenURI: String, httpClient: HTTPClient, now: () -> Int64) async throws -> Grant {
        let answer = try await OAuthTokenEndpoint.request(
            [("grant_type", grantType), ("assertion", assertion)], at: tokenURI, httpClient: httpClient, now: now)
        switch answer {
        case .granted(let accessToken, let expiresIn?) where expiresIn > 0:
            return Grant(accessToken: accessToken, expiresIn: expiresIn)
        case .granted:
            throw FCMTokenError(reason: .unavailable, status: 200, message: "the token endpoint's answer holds no access_token and expires_in")
        case .refused(let status, let error, let description):
            throw FCMTokenError(reason: .refused(error), status: status, message: description)
        case .unavailable(let status, let description, let retryAfter):
            throw FCMTokenError(reason: .unavailable, status: status, message: description, retryAfter: retryAfter)
        }
    }
}
