import HeraldHTTP

/// Why a push service did not accept a message, by the HTTP status it answered (RFC 8030
/// defines no reason strings; push services explain in the body, kept as the outcome's `detail`).
package struct WebPushErrorReason: ProviderReason {
    private enum Base: Hashable, Sendable {
        case badRequest, unauthorized, forbidden, notFound, requestTimeout, gone, payloadTooLarge, tooManyRequests
        case internalServerError, badGateway, serviceUnavailable, gatewayTimeout
        // Not sent: the subscription cannot be read or the message not encrypted for it
        case invalidSubscription
        case undeliverable(String)
        case unknown(String)
    }

    private let base: Base
    /// The HTTP status; 0 for a message that was not sent.
    package let status: Int

    private init(_ base: Base) {
        self.base = base
        self.status = 0
    }

    /// A device address that is no Web Push subscription (not its JSON, no keys).
    package static let invalidSubscription = WebPushErrorReason(.invalidSubscription)

    /// A message not sent because it cannot be encrypted or addressed: named by the error's
    /// code (`InvalidEndpoint`, `PayloadTooLarge`, …).
    package init(_ error: WebPushError) {
        self.init(.undeliverable(error.code))
    }

    /// The reason for an HTTP status.
    package init(status: Int) {
        self.status = status
        switch status {
        case 400: base = .badRequest
        case 401: base = .unauthorized
        case 403: base = .forbidden
        case 404: base = .notFound
        case 408: base = .requestTimeout
        case 410: base = .gone
        case 413: base = .payloadTooLarge
        case 429: base = .tooManyRequests
        case 500: base = .internalServerError
        case 502: base = .badGateway
        case 503: base = .serviceUnavailable
        case 504: base = .gatewayTimeout
        default: base = .unknown("HTTP \(status)")
        }
    }

    package static let badRequest = WebPushErrorReason(status: 400)
    package static let unauthorized = WebPushErrorReason(status: 401)
    package static let forbidden = WebPushErrorReason(status: 403)
    package static let notFound = WebPushErrorReason(status: 404)
    package static let gone = WebPushErrorReason(status: 410)
    package static let payloadTooLarge = WebPushErrorReason(status: 413)
    package static let tooManyRequests = WebPushErrorReason(status: 429)
    package static let serviceUnavailable = WebPushErrorReason(status: 503)

    /// A name for counters and logs: `Gone`, `PayloadTooLarge`, … or `HTTP 418`.
    package var name: String {
        switch base {
        case .badRequest: "BadRequest"
        case .unauthorized: "Unauthorized"
        case .forbidden: "Forbidden"
        case .notFound: "NotFound"
        case .requestTimeout: "RequestTimeout"
        case .gone: "Gone"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyRequests: "TooManyRequests"
        case .internalServerError: "InternalServerError"
        case .badGateway: "BadGateway"
        case .serviceUnavailable: "ServiceUnavailable"
        case .gatewayTimeout: "GatewayTimeout"
        case .invalidSubscription: "InvalidSubscription"
        case .undeliverable(let code): code
        case .unknown(let text): text
        }
    }

    package var description: String { name }

    package static func == (lhs: WebPushErrorReason, rhs: WebPushErrorReason) -> Bool { lhs.base == rhs.base }

    package func hash(into hasher: inout Hasher) { hasher.combine(base) }
}
