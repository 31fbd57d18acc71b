import HeraldHTTP

/// Why a Web Push message could not be encrypted or decrypted.
///
/// Compare with the static values (`error == .decryptionFailed`); `message` says what exactly.
package struct WebPushError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Base: Hashable, Sendable {
        case invalidKey, payloadTooLarge, malformedMessage, decryptionFailed, invalidEndpoint
    }

    private let base: Base
    /// What went wrong, for logs.
    package let message: String

    private init(_ base: Base, _ message: String) {
        self.base = base
        self.message = message
    }

    /// A key, salt or auth secret has the wrong size or is not a P-256 point.
    package static let invalidKey = WebPushError(.invalidKey, "invalid key")
    /// The plaintext does not fit in one record of the chosen size.
    package static let payloadTooLarge = WebPushError(.payloadTooLarge, "payload too large")
    /// An encrypted body whose aes128gcm header or record is cut short or inconsistent.
    package static let malformedMessage = WebPushError(.malformedMessage, "malformed message")
    /// The record did not authenticate with the derived key, or its padding is wrong.
    package static let decryptionFailed = WebPushError(.decryptionFailed, "decryption failed")
    /// A push endpoint that is not an https URL with a host.
    package static let invalidEndpoint = WebPushError(.invalidEndpoint, "invalid endpoint")

    static func invalidKey(_ message: String) -> WebPushError { WebPushError(.invalidKey, message) }
    static func payloadTooLarge(_ message: String) -> WebPushError { WebPushError(.payloadTooLarge, message) }
    static func malformedMessage(_ message: String) -> WebPushError { WebPushError(.malformedMessage, message) }
    static func decryptionFailed(_ message: String) -> WebPushError { WebPushError(.decryptionFailed, message) }
    static func invalidEndpoint(_ message: String) -> WebPushError { WebPushError(.invalidEndpoint, message) }

    package var description: String { message }

    /// A stable name for the kind of error, fit for counters and a push's `failures` (the
    /// message may quote the endpoint, which is the device's token).
    package var code: String {
        switch base {
        case .invalidKey: "InvalidSubscriptionKey"
        case .payloadTooLarge: "PayloadTooLarge"
        case .malformedMessage: "MalformedMessage"
        case .decryptionFailed: "DecryptionFailed"
        case .invalidEndpoint: "InvalidEndpoint"
        }
    }

    package static func == (lhs: WebPushError, rhs: WebPushError) -> Bool { lhs.base == rhs.base }

    package func hash(into hasher: inout Hasher) { hasher.combine(base) }
}
