import AsyncHTTPClient
import HeraldCore
import HeraldHTTP

/// OAuth2 access tokens for one service account: HeraldHTTP's `AccessTokenProvider` exchanging
/// a signed assertion (`FCMAssertionSigner`) at the account's `token_uri`.
package typealias FCMAccessTokenProvider = AccessTokenProvider<FCMTokenSource>

extension AccessTokenProvider where Source == FCMTokenSource {
    /// The JWT-bearer grant type of the exchange.
    static var grantType: String { "urn:ietf:params:oauth:grant-type:jwt-bearer" }

    /// - Parameters:
    ///   - httpClient: the client to reach `credentials.tokenURI` with.
    ///   - clock: the wall clock (token lifetimes, the assertion's `iat`).
    package init(credentials: FCMCredentials, httpClient: HTTPClient, clock: EpochClock = .system) throws {
        let tokenURI = credentials.tokenURI
        try self.init(credentials: credentials, clock: clock) { assertion in
            try await Self.exchange(assertion, at: tokenURI, httpClient: httpClient, clock: clock)
        }
    }

    /// Exchanges assertions through `exchange` (a test's token endpoint in memory).
    init(credentials: FCMCredentials, clock: EpochClock, exchange: @escaping @Sendable (_ assertion: String) async throws -> Grant) throws {
        let signer = try FCMAssertionSigner(credentials: credentials)
        self.init(clock: clock) { issuedAt in
            try await exchange(try signer.assertion(issuedAt: issuedAt.epochSeconds))
        }
    }

    // MARK: The exchange over HTTP

    static func exchange(_ assertion: String, at tokenURI: String, httpClient: HTTPClient, clock: EpochClock) async throws -> Grant {
        let answer = try await OAuthTokenEndpoint.request(
            [("grant_type", grantType), ("assertion", assertion)], at: tokenURI, httpClient: httpClient, clock: clock)
        switch answer {
        case .granted(let accessToken, let expiresIn?) where expiresIn > 0:
            return Grant(accessToken: accessToken, lifetime: .seconds(expiresIn))
        case .granted:
            throw FCMTokenError(
                reason: .unavailable, status: 200, message: "the token endpoint's answer holds no access_token and expires_in")
        case .refused(let status, let error, let description):
            throw FCMTokenError(reason: .refused(error), status: status, message: description)
        case .unavailable(let status, let description, let retryAfter):
            throw FCMTokenError(reason: .unavailable, status: status, message: description, retryAfter: retryAfter)
        }
    }
}
