import HeraldCore
import HeraldHTTP
import NIOHTTP1

/// What came of sending one notification to one channel, sorted by what to do about it:
///
/// - `delivered`: 200, WNS took the notification (`X-WNS-Status` says whether it was received or dropped).
/// - `deviceGone`: 404 or 410, the channel is unknown or expired.
/// - `retry`: 406 (throttled), 429 (monthly quota), 5xx, or a token endpoint that is down; not
///   before `retryAfter` seconds when WNS said (`X-WNS-CONTINUE-AFTER` or `Retry-After`).
/// - `credentialsRejected`: 403, a 401 that a fresh access token did not cure, or a token
///   endpoint that refuses the package SID and secret.
/// - `failed`: 400, 405, 413 or another refusal.
package typealias WNSOutcome = ProviderAnswer<WNSDelivery, WNSRejection>

extension ProviderAnswer where Receipt == WNSDelivery, Rejection == WNSRejection {
    /// The outcome of WNS's answer (a 401 here is final: the client has refreshed already).
    ///
    /// - Parameter now: when the answer came, to read a retry time given as an HTTP date.
    package init(status: Int, headers: HTTPHeaders, body: String, now: EpochClock.Instant) {
        if status == 200 {
            self = .delivered(
                WNSDelivery(
                    status: WNSDelivery.Status(headers.first(name: "x-wns-status")), messageID: headers.first(name: "x-wns-msg-id"),
                    deviceConnectionStatus: headers.first(name: "x-wns-deviceconnectionstatus")))
            return
        }
        let reason = WNSErrorReason(status: status)
        let description = headers.first(name: "x-wns-error-description") ?? ""
        let text = String(body.prefix(512)).trimmingASCIIWhitespace()
        let rejection = WNSRejection(
            status: status, reason: reason,
            message: !description.isEmpty ? description : !text.isEmpty ? text : HTTPResponseStatus(statusCode: status).reasonPhrase,
            messageID: headers.first(name: "x-wns-msg-id"), debugTrace: headers.first(name: "x-wns-debug-trace"))
        if reason.meansDeviceGone {
            self = .deviceGone(rejection)
        } else if reason.meansCredentialsRejected {
            self = .credentialsRejected(rejection)
        } else if reason.isRetryable || (500..<600).contains(status) || status == 408 {
            let after = headers.first(name: "x-wns-continue-after") ?? headers.first(name: "retry-after")
            self = .retry(rejection, retryAfter: RetryAfter.delay(after, at: now))
        } else {
            self = .failed(rejection)
        }
    }
}
