import HeraldHTTP

/// A refusal from WNS (or from its token endpoint), as it came.
public struct WNSRejection: ProviderRejection {
    /// The HTTP status.
    public var status: Int
    /// The status by name, or the token endpoint's OAuth error.
    public var reason: WNSErrorReason
    /// `X-WNS-Error-Description`, the token endpoint's `error_description`, or the answer's text.
    public var message: String
    /// `X-WNS-Msg-ID`: what Microsoft asks for, with the debug trace, when a problem is reported.
    public var messageID: String?
    /// `X-WNS-Debug-Trace`.
    public var debugTrace: String?

    public init(status: Int, reason: WNSErrorReason, message: String, messageID: String? = nil, debugTrace: String? = nil) {
        self.status = status
        self.reason = reason
        self.message = message
        self.messageID = messageID
        self.debugTrace = debugTrace
    }

    public var description: String { "\(status) \(reason): \(message)" }
}
