import HeraldHTTP

/// A WNS access token could not be had from the token endpoint.
public typealias WNSTokenError = AccessTokenError<WNSTokenSource>

/// The package SID and secret's token request, as `WNSTokenError` names it.
public enum WNSTokenSource: AccessTokenSource {
    public static let provider = "WNS"
    public static let credentials = "the package SID and secret"
}
