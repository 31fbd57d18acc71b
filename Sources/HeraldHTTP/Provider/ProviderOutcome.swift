import HeraldCore

/// What came of one notification to one device, in the terms every provider's answers are
/// sorted into. Each provider target sorts its own answers and names its own reasons (`Reason`:
/// `APNsErrorReason`, `FCMErrorReason`, `WebPushErrorReason`, `WNSErrorReason`); the delivery
/// engine acts on the case alone and keeps the reason's name.
package enum ProviderOutcome<Reason: ProviderReason>: Sendable, Equatable {
    /// The provider accepted it.
    case delivered
    /// The device's address is dead, for the provider's `Reason`; `since` is the provider's time
    /// for it, when it gives one (APNs's 410 timestamp).
    case gone(Reason, since: EpochClock.Instant?)
    /// Try again later, not before `after` when the provider said.
    case retry(Reason, after: Duration?)
    /// The provider refused the platform's credentials, and the provider target's own remedy
    /// (a fresh access or provider token) is spent: pause the platform, keep its devices.
    case credentialsRejected(Reason)
    /// This notification cannot be delivered as it is.
    case failed(Reason)
    /// No answer came: it was never sent, or its connection failed with it in flight.
    case unanswered(ProviderSendError)
}

/// A provider's reason for not delivering a notification, in swift-nio's style: a struct around
/// a private enum of the reasons Herald knows, with an `unknown(String)` for the rest. Its
/// `description` is the name counted and shown (`Unregistered`, `QUOTA_EXCEEDED`, …).
package protocol ProviderReason: Sendable, Hashable, CustomStringConvertible {}

/// A provider's own answer type, sorted into the shared `ProviderOutcome`.
package protocol ProviderOutcomeConvertible: Sendable {
    associatedtype Reason: ProviderReason
    /// What the answer means for delivery.
    var providerOutcome: ProviderOutcome<Reason> { get }
}

extension Result where Success: ProviderOutcomeConvertible, Failure == ProviderSendError {
    /// The outcome of an answer, or `unanswered`.
    package var providerOutcome: ProviderOutcome<Success.Reason> {
        switch self {
        case .success(let answer): answer.providerOutcome
        case .failure(let error): .unanswered(error)
        }
    }
}
