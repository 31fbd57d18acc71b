import HeraldCore

/// What came of one notification to one device, in the engine's terms: each provider's
/// outcomes are sorted into these, and the dispatcher acts on these alone. Times are
/// `Duration`s and `EpochClock` instants; they become milliseconds only in the store.
enum DeliveryOutcome: Sendable, Equatable {
    /// The provider accepted it.
    case delivered
    /// The token is dead, for `reason` (the provider's); `since` is the provider's time for it,
    /// when it gives one.
    case gone(reason: String, since: EpochClock.Instant?)
    /// Try again later, not before `after` when the provider said.
    case retry(reason: String, after: Duration?)
    /// The provider refused the platform's credentials, its own remedies spent: pause the platform.
    case credentialsRejected(reason: String)
    /// This notification cannot be delivered as it is.
    case failed(reason: String)
    /// No answer came (a connection failed with it in flight): it may or may not have arrived.
    case unanswered(reason: String)
    /// Not sent: the process is shutting down.
    case notAttempted
}
