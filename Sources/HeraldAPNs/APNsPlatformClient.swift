import HeraldCore
import HeraldHTTP

/// APNs for one platform: its connections (`APNsClient`), its topic and, with token-based
/// auth, its provider tokens. The delivery engine's `ProviderClient`.
///
/// The provider token comes from `APNsProviderTokens`, shared with the platform's other
/// processes through its store; a store that cannot be read makes the batch `retry`.
///
/// A refused provider token is dealt with here: the refused notifications come back as `retry`
/// while `APNsTokenStateMachine` grants one more try, and as `credentialsRejected` (pause the
/// platform) once it does not. A refused certificate is `credentialsRejected` at once: it will
/// not get better by itself.
package struct APNsPlatformClient: ProviderClient {
    package let client: APNsClient
    /// The app's bundle id (`apns-topic`).
    package let topic: String
    /// The provider tokens with token-based auth; nil with a client certificate.
    package let tokens: APNsProviderTokens?

    package init(client: APNsClient, topic: String, tokens: APNsProviderTokens?) {
        self.client = client
        self.topic = topic
        self.tokens = tokens
    }

    package func send(_ notification: APNsNotification, to deviceTokens: [String]) async -> [ProviderOutcome<APNsErrorReason>] {
        guard let tokens else {
            return await client.send(notification, deviceTokens: deviceTokens, topic: topic, bearer: nil).map { $0.providerOutcome }
        }
        let lease: APNsTokenStateMachine.Lease
        do {
            guard let leased = try await tokens.lease() else {
                return deviceTokens.map { _ in .credentialsRejected(APNsErrorReason("InvalidProviderToken")) }
            }
            lease = leased
        } catch  where error.meansCredentialsUnusable {
            return deviceTokens.map { _ in .credentialsRejected(APNsErrorReason("ProviderTokenNotSigned")) }
        } catch {
            // The shared token's store failed (the database): the batch waits its turn again.
            return deviceTokens.map { _ in .retry(APNsErrorReason("ProviderTokenUnavailable"), after: nil) }
        }
        var outcomes = await client.send(notification, deviceTokens: deviceTokens, topic: topic, bearer: lease.token)
            // A closure, not the key path `\.providerOutcome`: key-path projection showed in the fan-out's profile.
            .map { $0.providerOutcome }
        if outcomes.contains(where: { if case .credentialsRejected = $0 { true } else { false } }) {
            if tokens.rejected(lease) == .retry {
                outcomes = outcomes.map { outcome in
                    if case .credentialsRejected(let reason) = outcome { .retry(reason, after: nil) } else { outcome }
                }
            }
        } else if outcomes.contains(.delivered) {
            tokens.accepted(lease)
        }
        return outcomes
    }
}
