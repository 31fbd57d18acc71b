import HeraldHTTP

/// An error answer from FCM (or from the OAuth2 token endpoint), as Google sent it.
package struct FCMRejection: ProviderRejection {
    /// The HTTP status.
    package var status: Int
    /// The `FcmError` code when there is one, else the API status (`UNAUTHENTICATED`, …); for
    /// the token endpoint, its OAuth2 `error` (`invalid_grant`, …).
    package var reason: FCMErrorReason
    /// Google's message, for logs and the platform's status.
    package var message: String

    package init(status: Int, reason: FCMErrorReason, message: String) {
        self.status = status
        self.reason = reason
        self.message = message
    }

    package var description: String { "\(status) \(reason): \(message)" }
}
