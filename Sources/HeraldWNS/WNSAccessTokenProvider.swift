import AsyncHTTPClient
import HeraldCore
import HeraldHTTP

/// OAuth access tokens for one Windows app (package SID and secret): HeraldHTTP's
/// `AccessTokenProvider` asking the token endpoint with the client-credentials grant.
package typealias WNSAccessTokenProvider = AccessTokenProvider<WNSTokenSource>

extension AccessTokenProvider where Source == WNSTokenSource {
    /// Microsoft's token endpoint for WNS.
    package static var defaultTokenEndpoint: String { "https://login.live.com/accesstoken.srf" }
    /// The scope WNS tokens are asked for.
    package static var scope: String { "notify.windows.com" }
    /// The lifetime assumed when the endpoint states no `expires_in`.
    static var assumedLifetime: Duration { .seconds(3600) }

    /// - Parameters:
    ///   - tokenEndpoint: Microsoft's, or a test server's.
    ///   - httpClient: the client to reach it with.
    ///   - clock: the wall clock (token lifetimes).
    package init(
        credentials: WNSCredentials, tokenEndpoint: String = WNSAccessTokenProvider.defaultTokenEndpoint, httpClient: HTTPClient,
        clock: EpochClock = .system
    ) {
        self.init(clock: clock) { _ in
            try await Self.exchange(credentials, at: tokenEndpoint, httpClient: httpClient, clock: clock)
        }
    }

    // MARK: The request over HTTP

    static func exchange(_ credentials: WNSCredentials, at tokenEndpoint: String, httpClient: HTTPClient, clock: EpochClock) async throws
        -> Grant
    {
        let answer = try await OAuthTokenEndpoint.request(
            form(credentials), at: tokenEndpoint, httpClient: httpClient, clock: clock)
        switch answer {
        case .granted(let accessToken, let expiresIn):
            return Grant(accessToken: accessToken, lifetime: expiresIn.map { .seconds(max(1, $0)) } ?? assumedLifetime)
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
