import HeraldHTTP

/// Why FCM refused a message: Google's `FcmError` error codes, the generic API statuses that
/// come without one (`UNAUTHENTICATED`, `PERMISSION_DENIED`, …), and `unknown` for the rest.
package struct FCMErrorReason: ProviderReason {
    private enum Base: Hashable, Sendable {
        // FcmError codes (google.firebase.fcm.v1.FcmError.errorCode)
        case unspecifiedError, invalidArgument, unregistered, senderIDMismatch, quotaExceeded, unavailable, internalError
        case thirdPartyAuthError
        // API statuses (google.rpc.Code) seen without an FcmError detail
        case unauthenticated, permissionDenied, notFound, resourceExhausted
        case unknown(String)
    }

    private let base: Base
    /// Google's text, as received (`UNREGISTERED`, `QUOTA_EXCEEDED`, …).
    package let name: String

    /// Parses an `errorCode` or `status` of an FCM error body.
    package init(_ code: String) {
        name = code
        switch code {
        case "UNSPECIFIED_ERROR": base = .unspecifiedError
        case "INVALID_ARGUMENT": base = .invalidArgument
        case "UNREGISTERED": base = .unregistered
        case "SENDER_ID_MISMATCH": base = .senderIDMismatch
        case "QUOTA_EXCEEDED": base = .quotaExceeded
        case "UNAVAILABLE": base = .unavailable
        case "INTERNAL": base = .internalError
        case "THIRD_PARTY_AUTH_ERROR": base = .thirdPartyAuthError
        case "UNAUTHENTICATED": base = .unauthenticated
        case "PERMISSION_DENIED": base = .permissionDenied
        case "NOT_FOUND": base = .notFound
        case "RESOURCE_EXHAUSTED": base = .resourceExhausted
        default: base = .unknown(code)
        }
    }

    package static let invalidArgument = FCMErrorReason("INVALID_ARGUMENT")
    package static let unregistered = FCMErrorReason("UNREGISTERED")
    package static let senderIDMismatch = FCMErrorReason("SENDER_ID_MISMATCH")
    package static let quotaExceeded = FCMErrorReason("QUOTA_EXCEEDED")
    package static let unavailable = FCMErrorReason("UNAVAILABLE")
    package static let internalError = FCMErrorReason("INTERNAL")
    package static let thirdPartyAuthError = FCMErrorReason("THIRD_PARTY_AUTH_ERROR")
    package static let unauthenticated = FCMErrorReason("UNAUTHENTICATED")
    package static let permissionDenied = FCMErrorReason("PERMISSION_DENIED")

    /// The registration token is dead (`UNREGISTERED`): deactivate the device.
    /// (`INVALID_ARGUMENT` means the same only when it is about the token; see `FCMOutcome`.)
    package var meansDeviceGone: Bool {
        switch base {
        case .unregistered: true
        case .unspecifiedError, .invalidArgument, .senderIDMismatch, .quotaExceeded, .unavailable, .internalError,
            .thirdPartyAuthError, .unauthenticated, .permissionDenied, .notFound, .resourceExhausted, .unknown:
            false
        }
    }

    /// The service account, its project or the app's APNs/web credentials in Firebase were refused.
    package var meansCredentialsRejected: Bool {
        switch base {
        case .senderIDMismatch, .thirdPartyAuthError, .unauthenticated, .permissionDenied: true
        case .unspecifiedError, .invalidArgument, .unregistered, .quotaExceeded, .unavailable, .internalError, .notFound,
            .resourceExhausted, .unknown:
            false
        }
    }

    /// Worth sending again later (honouring `Retry-After`, else with backoff).
    package var isRetryable: Bool {
        switch base {
        case .quotaExceeded, .unavailable, .internalError, .resourceExhausted: true
        case .unspecifiedError, .invalidArgument, .unregistered, .senderIDMismatch, .thirdPartyAuthError, .unauthenticated,
            .permissionDenied, .notFound, .unknown:
            false
        }
    }

    package var description: String { name }

    package static func == (lhs: FCMErrorReason, rhs: FCMErrorReason) -> Bool { lhs.base == rhs.base }

    package func hash(into hasher: inout Hasher) { hasher.combine(base) }
}
