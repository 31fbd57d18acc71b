import HeraldHTTP

/// Why WNS (or its token endpoint) did not take a notification: WNS's HTTP statuses by name,
/// the OAuth errors of the token endpoint, and `unknown` for the rest.
package struct WNSErrorReason: ProviderReason {
    private enum Base: Hashable, Sendable {
        // WNS's answers to a notification
        case badRequest, unauthorized, forbidden, channelNotFound, methodNotAllowed, throttled, channelExpired
        case payloadTooLarge, quotaExceeded, internalServerError, serviceUnavailable
        // The token endpoint's OAuth errors (RFC 6749 §5.2)
        case invalidClient, invalidRequest, invalidScope, unauthorizedClient, unsupportedGrantType
        // Not sent: the channel URI is not one Herald sends to (`WNSError`'s code)
        case undeliverable(String)
        case unknown(String)
    }

    private let base: Base
    /// A name for counters and logs: `Throttled`, `ChannelExpired`, `invalid_client`, … or `HTTP 418`.
    package let name: String

    private init(_ base: Base, _ name: String) {
        self.base = base
        self.name = name
    }

    /// The reason for WNS's answer to a notification.
    package init(status: Int) {
        switch status {
        case 400: self = .badRequest
        case 401: self = .unauthorized
        case 403: self = .forbidden
        case 404: self = .channelNotFound
        case 405: self = .methodNotAllowed
        case 406: self = .throttled
        case 410: self = .channelExpired
        case 413: self = .payloadTooLarge
        case 429: self = .quotaExceeded
        case 500: self = .internalServerError
        case 503: self = .serviceUnavailable
        default: self.init(.unknown("HTTP \(status)"), "HTTP \(status)")
        }
    }

    /// The reason for the token endpoint's OAuth `error`.
    package init(oauthError: String) {
        switch oauthError {
        case "invalid_client": self = .invalidClient
        case "invalid_request": self = .invalidRequest
        case "invalid_scope": self = .invalidScope
        case "unauthorized_client": self = .unauthorizedClient
        case "unsupported_grant_type": self = .unsupportedGrantType
        default: self.init(.unknown(oauthError), oauthError)
        }
    }

    /// 400: a header is wrong or conflicts with another.
    package static let badRequest = WNSErrorReason(.badRequest, "BadRequest")
    /// 401: the access token is invalid or expired.
    package static let unauthorized = WNSErrorReason(.unauthorized, "Unauthorized")
    /// 403: the access token is not of the app that made the channel.
    package static let forbidden = WNSErrorReason(.forbidden, "Forbidden")
    /// 404: WNS does not know the channel.
    package static let channelNotFound = WNSErrorReason(.channelNotFound, "ChannelNotFound")
    /// 405: only POST (and DELETE) are allowed.
    package static let methodNotAllowed = WNSErrorReason(.methodNotAllowed, "MethodNotAllowed")
    /// 406: the sender exceeded its throttle limit.
    package static let throttled = WNSErrorReason(.throttled, "Throttled")
    /// 410: the channel expired.
    package static let channelExpired = WNSErrorReason(.channelExpired, "ChannelExpired")
    /// 413: the payload is over 5000 bytes.
    package static let payloadTooLarge = WNSErrorReason(.payloadTooLarge, "PayloadTooLarge")
    /// 429: the app's monthly quota is used up.
    package static let quotaExceeded = WNSErrorReason(.quotaExceeded, "QuotaExceeded")
    /// 500: WNS failed.
    package static let internalServerError = WNSErrorReason(.internalServerError, "InternalServerError")
    /// 503: WNS is unavailable.
    package static let serviceUnavailable = WNSErrorReason(.serviceUnavailable, "ServiceUnavailable")
    /// The token endpoint does not know the package SID, or the secret is wrong.
    package static let invalidClient = WNSErrorReason(.invalidClient, "invalid_client")
    /// The request lacks a parameter (`client_id`, `client_secret`, …).
    package static let invalidRequest = WNSErrorReason(.invalidRequest, "invalid_request")
    /// The scope is not `notify.windows.com`.
    package static let invalidScope = WNSErrorReason(.invalidScope, "invalid_scope")
    /// The app may not use this grant.
    package static let unauthorizedClient = WNSErrorReason(.unauthorizedClient, "unauthorized_client")
    /// The grant type is not `client_credentials`.
    package static let unsupportedGrantType = WNSErrorReason(.unsupportedGrantType, "unsupported_grant_type")

    /// A notification not sent because its channel URI cannot be sent to (off WNS's hosts, no
    /// URL): named by the error's code (`ChannelNotAllowed`, `InvalidEndpoint`).
    package init(_ error: WNSError) {
        self.init(.undeliverable(error.code), error.code)
    }

    /// The channel is dead (404, 410): deactivate the device.
    package var meansDeviceGone: Bool {
        switch base {
        case .channelNotFound, .channelExpired: true
        case .badRequest, .unauthorized, .forbidden, .methodNotAllowed, .throttled, .payloadTooLarge, .quotaExceeded,
            .internalServerError, .serviceUnavailable, .invalidClient, .invalidRequest, .invalidScope, .unauthorizedClient,
            .unsupportedGrantType, .undeliverable, .unknown:
            false
        }
    }

    /// The package SID and secret, or the token they bring, were refused: pause the platform.
    package var meansCredentialsRejected: Bool {
        switch base {
        case .unauthorized, .forbidden, .invalidClient, .invalidRequest, .invalidScope, .unauthorizedClient, .unsupportedGrantType: true
        case .badRequest, .channelNotFound, .methodNotAllowed, .throttled, .channelExpired, .payloadTooLarge, .quotaExceeded,
            .internalServerError, .serviceUnavailable, .undeliverable, .unknown:
            false
        }
    }

    /// Worth sending again later (after `X-WNS-CONTINUE-AFTER` or `Retry-After`, else with backoff).
    package var isRetryable: Bool {
        switch base {
        case .throttled, .quotaExceeded, .internalServerError, .serviceUnavailable: true
        case .badRequest, .unauthorized, .forbidden, .channelNotFound, .methodNotAllowed, .channelExpired, .payloadTooLarge,
            .invalidClient, .invalidRequest, .invalidScope, .unauthorizedClient, .unsupportedGrantType, .undeliverable, .unknown:
            false
        }
    }

    package var description: String { name }

    package static func == (lhs: WNSErrorReason, rhs: WNSErrorReason) -> Bool { lhs.base == rhs.base }

    package func hash(into hasher: inout Hasher) { hasher.combine(base) }
}
