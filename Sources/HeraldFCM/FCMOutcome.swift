import HeraldHTTP

/// What came of sending one message to one registration token, sorted by what to do about it:
///
/// - `delivered(name)`: 200, FCM accepted the message; its name is `projects/{project}/messages/{id}`.
/// - `deviceGone`: the token is dead (`UNREGISTERED`, or `INVALID_ARGUMENT` about the token).
/// - `retry`: `QUOTA_EXCEEDED` (429), `UNAVAILABLE` (503), `INTERNAL` (500) and other server
///   errors, or a token endpoint that is down; `retryAfter` is Google's `Retry-After` when it sent one.
/// - `credentialsRejected`: `SENDER_ID_MISMATCH`, `THIRD_PARTY_AUTH_ERROR`, 403
///   `PERMISSION_DENIED`, a 401 that a fresh access token did not cure, or a token endpoint
///   that refuses the service account.
/// - `failed`: another `INVALID_ARGUMENT`, an unknown error.
package typealias FCMOutcome = ProviderAnswer<String, FCMRejection>
