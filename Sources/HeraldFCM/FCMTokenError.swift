import HeraldHTTP

/// An FCM access token could not be had.
package typealias FCMTokenError = AccessTokenError<FCMTokenSource>

/// The service account's token exchange, as `FCMTokenError` names it.
package enum FCMTokenSource: AccessTokenSource {
    package static let provider = "FCM"
    package static let credentials = "the service account"
}
