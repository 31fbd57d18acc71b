/// The one contract between the delivery engine and a provider (APNs, FCM, Web Push, WNS, or
/// the next one): send one rendered notification to a batch of device addresses, get back one
/// outcome per address, in the addresses' order.
///
/// A conforming client owns everything provider-specific: the wire protocol, the platform's
/// credentials and their state (APNs provider tokens, OAuth2 access tokens, VAPID), the
/// remedies it may try by itself (one fresh token after a refusal), and the sorting of every
/// answer into a `ProviderOutcome`. It reports `credentialsRejected` only when its remedies are
/// spent, so the engine can pause the platform on it without asking back.
package protocol ProviderClient: Sendable {
    /// The rendered notification the provider takes (`APNsNotification`, `FCMMessage`, …).
    associatedtype Notification: Sendable
    /// The provider's reasons for not delivering.
    associatedtype Reason: ProviderReason

    /// Sends `notification` to each address (an APNs device token, an FCM registration token, a
    /// Web Push subscription's JSON, a WNS channel URI); one outcome per address, in order.
    func send(_ notification: Notification, to addresses: [String]) async -> [ProviderOutcome<Reason>]
}
