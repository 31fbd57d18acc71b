import HeraldHTTP

/// A WNS access token could not be had from the token endpoint.
package typealias WNSTokenError = AccessTokenError<WNSTokenSource>

/// The package SID and secret's token request, as `WNSTokenError` names it.
package enum WNSTokenSource: AccessTokenSource {
    package static let provider = "WNS"
    package static let credentials = "the package SID and secret"
}
