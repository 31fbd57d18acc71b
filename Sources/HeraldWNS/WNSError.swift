import HeraldHTTP

/// Why `WNSClient` would not send, or could not be made.
///
/// Compare with the static values (`error == .channelNotAllowed`); `message` says what exactly.
package struct WNSError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Base: Hashable, Sendable {
        case channelNotAllowed, invalidEndpoint
    }

    private let base: Base
    /// What went wrong, for logs and the device's failure.
    package let message: String

    private init(_ base: Base, _ message: String) {
        self.base = base
        self.message = message
    }

    /// The channel URI is not an https URL on a WNS host (`*.notify.windows.com`) or on the
    /// client's allowed test host: nothing was sent, so no access token left the machine.
    package static let channelNotAllowed = WNSError(.channelNotAllowed, "channel not allowed")
    /// The token endpoint or the endpoint override is not an http(s) URL.
    package static let invalidEndpoint = WNSError(.invalidEndpoint, "invalid endpoint")

    static func channelNotAllowed(_ message: String) -> WNSError { WNSError(.channelNotAllowed, message) }
    static func invalidEndpoint(_ message: String) -> WNSError { WNSError(.invalidEndpoint, message) }

    package var description: String { message }

    /// A stable name for the kind of error, fit for counters and a push's `failures` (the
    /// message may quote the channel URI, which is the device's token).
    package var code: String {
        switch base {
        case .channelNotAllowed: "ChannelNotAllowed"
        case .invalidEndpoint: "InvalidEndpoint"
        }
    }

    package static func == (lhs: WNSError, rhs: WNSError) -> Bool { lhs.base == rhs.base }

    package func hash(into hasher: inout Hasher) { hasher.combine(base) }
}
