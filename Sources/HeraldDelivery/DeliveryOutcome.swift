/// What came of one notification to one device, in the engine's terms: each provider's
/// outcomes are sorted into these, and the dispatcher acts on these alone.
enum DeliveryOutcome: Sendable, Equatable {
    /// The provider accepted it.
    case delivered
    /// The token is dead; `since` is the provider's time for it (epoch ms), when it gives one.
    case gone(since: Int64?)
    /// Try again later; `after` is the provider's wish in seconds, when it gives one.
    case retry(reason: String, after: Int64?)
    /// The provider refused the platform's credentials.
    case credentialsRejected(reason: String)
    /// This notification cannot be delivered as it is.
    case failed(reason: String)
    /// No answer came (a connection failed with it in flight): it may or may not have arrived.
    case unanswered(reason: String)
    /// Not sent: the process is shutting down.
    case notAttempted
}
