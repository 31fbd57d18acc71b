import HeraldHTTP

/// A refusal from WNS (or from its token endpoint), as it came.
package struct WNSRejection: ProviderRejection {
    /// The HTTP status.
    package var status: Int
    /// The status by name, or the token endpoint's OAuth error.
    package var reason: WNSErrorReason
    /// `X-WNS-Error-Description`, the token endpoint's `error_description`, or the answer's text.
    package var message: String
    /// `X-WNS-Msg-ID`: what Microsoft asks for, with the debug trace, when a problem is reported.
    package var messageID: String?
    /// `X-WNS-Debug-Trace`.
    package var debugTrace: String?

    package init(status: Int, reason: WNSErrorReason, message: String, messageID: String? = nil, debugTrace: String? = nil) {
        self.status = status
        self.reason = reason
        self.message = message
        self.messageID = messageID
        self.debugTrace = debugTrace
    }

    package var description: String { "\(status) \(reason): \(message)" }
}
