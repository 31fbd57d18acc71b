import HeraldHTTP

/// An FCM access token could not be had.
public typealias FCMTokenError = AccessTokenError<FCMTokenSource>

/// The service account's token exchange, as `FCMTokenError` names it.
public enum FCMTokenSource: AccessTokenSource {
    public static let provider = "FCM"
    public static let credentials = "the service account"
}
