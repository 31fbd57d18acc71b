/// When an OAuth2 access token is renewed: `renewBefore` its expiry, or halfway through its
/// lifetime when that comes later (a lifetime under twice `renewBefore`), so that a short-lived
/// token is not renewed on every request.
///
/// One rule for FCM and WNS: Google's tokens live about an hour and Microsoft's a day, so both
/// renew five minutes before expiry; only a token endpoint that grants less than ten minutes
/// (a test server's) reaches the halfway rule.
package struct AccessTokenRenewal: Sendable, Equatable {
    /// Renew this long before the token expires.
    package var renewBefore: Duration

    package init(renewBefore: Duration) {
        self.renewBefore = renewBefore
    }

    /// Five minutes before expiry (or halfway).
    package static let standard = AccessTokenRenewal(renewBefore: .seconds(5 * 60))

    /// How long after it was asked for a token that lives `lifetime` is renewed.
    package func renewAfter(lifetime: Duration) -> Duration {
        max(lifetime / 2, lifetime - renewBefore)
    }
}
