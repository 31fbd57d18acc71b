import HeraldCore
import HeraldHTTP

/// Web Push for one platform: the process's one `WebPushClient` (the endpoints are the
/// subscriptions') with the platform's VAPID key. The delivery engine's `ProviderClient`.
package struct WebPushPlatformClient: ProviderClient {
    package let client: WebPushClient
    package let vapid: VAPIDSigner

    package init(client: WebPushClient, vapid: VAPIDSigner) {
        self.client = client
        self.vapid = vapid
    }

    /// Sends `notification` to each subscription (its JSON as registered).
    ///
    /// An address that is no subscription fails `InvalidSubscription`, a message that cannot be
    /// encrypted or addressed fails with its `WebPushError`'s code. A push service refuses a
    /// subscription made for another VAPID key: only when every message of the batch is refused
    /// are the platform's credentials rejected; otherwise the refused messages fail, their
    /// devices alone concerned.
    package func send(_ notification: WebPushNotification, to addresses: [String]) async -> [ProviderOutcome<WebPushErrorReason>] {
        var outcomes = [ProviderOutcome<WebPushErrorReason>](repeating: .failed(.invalidSubscription), count: addresses.count)
        var valid: [(index: Int, subscription: WebPushSubscription)] = []
        for (index, address) in addresses.enumerated() {
            if let subscription = try? WebPushSubscription(json: address) { valid.append((index, subscription)) }
        }
        let results = await client.send(notification, to: valid.map(\.subscription), vapid: vapid)
        var refused = 0
        for ((index, _), result) in zip(valid, results) {
            switch result {
            case .success(let answer):
                outcomes[index] = answer.providerOutcome
                if case .credentialsRejected = outcomes[index] { refused += 1 }
            case .failure(let error as WebPushError):
                outcomes[index] = .failed(WebPushErrorReason(error))
            case .failure(let error as ProviderSendError):
                outcomes[index] = .unanswered(error)
            case .failure(let error):
                outcomes[index] = .unanswered(.unknown("\(error)"))
            }
        }
        guard refused > 0, refused < outcomes.count else { return outcomes }
        return outcomes.map { outcome in
            if case .credentialsRejected(let reason) = outcome { .failed(reason) } else { outcome }
        }
    }
}
