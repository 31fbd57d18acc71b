/// What came of sending one message to one registration token, sorted by what to do about it.
///
/// The client only sorts; acting on an outcome (counting, deactivating the device, scheduling a
/// retry, pausing the platform) is the delivery engine's decision.
public enum FCMOutcome: Sendable, Equatable {
    /// 200: FCM accepted the message; its name is `projects/{project}/messages/{id}`.
    case delivered(messageName: String)
    /// The token is dead (`UNREGISTERED`, or `INVALID_ARGUMENT` about the token): deactivate the device.
    case deviceGone(FCMRejection)
    /// Try again later: `QUOTA_EXCEEDED` (429), `UNAVAILABLE` (503), `INTERNAL` (500) and other
    /// server errors, or a token endpoint that is down. `retryAfter` (seconds) is Google's
    /// `Retry-After` when it sent one; without it, back off exponentially.
    case retry(FCMRejection, retryAfter: Int64?)
    /// The credentials are failing (`SENDER_ID_MISMATCH`, `THIRD_PARTY_AUTH_ERROR`, 403
    /// `PERMISSION_DENIED`, a 401 that a fresh access token did not cure, or a token endpoint
    /// that refuses the service account): pause the platform and keep its devices.
    case credentialsRejected(FCMRejection)
    /// This message cannot be sent as it is (another `INVALID_ARGUMENT`, an unknown error): fail it.
    case failed(FCMRejection)
}
