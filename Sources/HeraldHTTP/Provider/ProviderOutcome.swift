import HeraldCore

/// What came of one notification to one device, in the terms every provider's answers are
/// sorted into (each provider target sorts its own: `APNsOutcome`, `FCMOutcome`,
/// `WebPushOutcome`, `WNSOutcome` conform to `ProviderOutcomeConvertible`). A notification
/// that got no answer is a `ProviderSendError` instead.
public enum ProviderOutcome: Sendable, Equatable {
    /// The provider accepted it.
    case delivered
    /// The device's address is dead; `since` is the provider's time for it, when it gives one
    /// (APNs's 410 timestamp).
    case gone(since: EpochClock.Instant?)
    /// Try again later, not before `after` when the provider said.
    case retry(reason: String, after: Duration?)
    /// The provider refused the platform's credentials.
    case credentialsRejected(reason: String)
    /// This notification cannot be delivered as it is.
    case failed(reason: String)
}

/// A provider's own outcome type, sorted into the shared `ProviderOutcome`.
public protocol ProviderOutcomeConvertible: Sendable {
    /// What the outcome means for delivery.
    var providerOutcome: ProviderOutcome { get }
}

/// An error that means a notification cannot be sent as it is addressed (a Web Push
/// subscription whose endpoint is no URL, a WNS channel off WNS's hosts): nothing was sent.
public protocol UndeliverableError: Error {
    /// The machine-readable name of what is wrong.
    var code: String { get }
}
