/// A provider's answer to one notification, sorted by what to do about it, for providers whose
/// refusals all carry one rejection type (FCM: `FCMOutcome`, WNS: `WNSOutcome`).
///
/// The client only sorts; acting on an answer (counting, deactivating the device, scheduling a
/// retry, pausing the platform) is the delivery engine's decision, through `providerOutcome`.
package enum ProviderAnswer<Receipt: Sendable & Equatable, Rejection: ProviderRejection>: Sendable, Equatable {
    /// The provider took the notification; `Receipt` is what it said (a message name, …).
    case delivered(Receipt)
    /// The device's address is dead: deactivate the device.
    case deviceGone(Rejection)
    /// Try again later, not before `retryAfter` when the provider said.
    case retry(Rejection, retryAfter: Duration?)
    /// The credentials are failing (the client's own remedy, a fresh access token, spent):
    /// pause the platform and keep its devices.
    case credentialsRejected(Rejection)
    /// This notification cannot be sent as it is: fail it.
    case failed(Rejection)
}

/// A provider's refusal as it came (status, reason, message, …), named by its `reason`.
package protocol ProviderRejection: Sendable, Equatable, CustomStringConvertible {
    associatedtype Reason: ProviderReason
    /// Why, in the provider's terms.
    var reason: Reason { get }
}

extension ProviderAnswer: ProviderOutcomeConvertible {
    package var providerOutcome: ProviderOutcome<Rejection.Reason> {
        switch self {
        case .delivered: .delivered
        case .deviceGone(let rejection): .gone(rejection.reason, since: nil)
        case .retry(let rejection, let after): .retry(rejection.reason, after: after)
        case .credentialsRejected(let rejection): .credentialsRejected(rejection.reason)
        case .failed(let rejection): .failed(rejection.reason)
        }
    }
}
