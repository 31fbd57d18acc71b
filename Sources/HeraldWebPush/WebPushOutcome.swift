/// What a push service said about one message (RFC 8030 §5 and §8), sorted by what to do about it.
package enum WebPushOutcome: Sendable, Equatable {
    /// 201 (any 2xx): the push service took the message; `location` is the push message resource.
    case delivered(location: String?)
    /// 404 or 410: the subscription expired or was unsubscribed; deactivate the device.
    case deviceGone(WebPushErrorReason)
    /// 429, 408 or 5xx: send again later, not before `retryAfter` when the push service said.
    case retry(WebPushErrorReason, retryAfter: Duration?)
    /// 401 or 403: the VAPID token or key was refused (the cached token is dropped already).
    case credentialsRejected(WebPushErrorReason, detail: String)
    /// 400, 413 or another refusal: this message will not be delivered as it is; `detail` is
    /// the push service's explanation (the start of its answer's body).
    case failed(WebPushErrorReason, detail: String)

    /// The outcome for a push service's answer.
    ///
    /// - Parameters:
    ///   - retryAfter: the `Retry-After` header, already as a delay from now.
    ///   - detail: the answer's body as text.
    package init(status: Int, location: String?, retryAfter: Duration?, detail: String) {
        let reason = WebPushErrorReason(status: status)
        switch status {
        case 200..<300: self = .delivered(location: location)
        case 404, 410: self = .deviceGone(reason)
        case 408, 429, 500..<600: self = .retry(reason, retryAfter: retryAfter)
        case 401, 403: self = .credentialsRejected(reason, detail: detail)
        default: self = .failed(reason, detail: detail)
        }
    }
}
