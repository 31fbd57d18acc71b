/// Names what an access token is fetched for, in `AccessTokenError`'s messages.
package protocol AccessTokenSource: Sendable {
    /// The provider (`FCM`).
    static var provider: String { get }
    /// What the token endpoint is given (`the service account`).
    static var credentials: String { get }
}

/// An access token could not be had from a provider's OAuth2 token endpoint (FCM, WNS).
package struct AccessTokenError<Source: AccessTokenSource>: Error, Sendable, Equatable, CustomStringConvertible {
    /// Whether the credentials are at fault, and how.
    package enum Reason: Sendable, Equatable {
        /// The token endpoint refused the credentials with this OAuth2 error (`invalid_grant`,
        /// `invalid_client`, …): the credentials are failing.
        case refused(String)
        /// The credentials failed earlier (refused by the token endpoint, or a fresh token refused
        /// by the provider); nothing more is fetched.
        case failing
        /// The token endpoint is not answering with tokens (5xx, 429, a malformed answer): try later.
        case unavailable
    }

    /// Refused, failing or unavailable.
    package var reason: Reason
    /// The token endpoint's (or the provider's) HTTP status, when there was one.
    package var status: Int?
    /// The endpoint's `error_description`, or what went wrong.
    package var message: String
    /// The token endpoint's `Retry-After`, in seconds.
    package var retryAfter: Duration?

    package init(reason: Reason, status: Int?, message: String, retryAfter: Duration? = nil) {
        self.reason = reason
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
    }

    /// Pause the platform: these credentials will not work until they are replaced.
    package var meansCredentialsRejected: Bool {
        switch reason {
        case .refused, .failing: true
        case .unavailable: false
        }
    }

    package var description: String {
        let status = status.map { "HTTP \($0): " } ?? ""
        switch reason {
        case .refused(let error): return "the token endpoint refused \(Source.credentials): \(status)\(error): \(message)"
        case .failing: return "the \(Source.provider) credentials are failing: \(status)\(message)"
        case .unavailable: return "no \(Source.provider) access token: \(status)\(message)"
        }
    }
}
