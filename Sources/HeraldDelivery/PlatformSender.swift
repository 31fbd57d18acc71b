import HeraldAPNs
import HeraldCore
import HeraldFCM
import HeraldHTTP
import HeraldStore
import HeraldWNS
import HeraldWebPush

/// One platform's provider client, ready to send, and how its outcomes read in the engine's
/// terms (`DeliveryOutcome`). Every provider is a `ProviderClient`; the only per-provider step
/// here is picking the rendering of the push that provider takes.
struct PlatformSender: Sendable {
    enum Client: Sendable {
        case apns(APNsPlatformClient)
        /// `notification`: the platform's `fcm_notification`.
        case fcm(FCMClient, notification: Bool)
        case webPush(WebPushPlatformClient)
        case wns(WNSClient)
    }

    /// Where the provider latency and the requests in flight are recorded.
    var metrics = DeliveryMetrics()
    let client: Client
    /// Whether the provider has accepted a notification of this platform since its client was
    /// made (its credentials work): no probe round is needed.
    var accepting = false

    /// The provider's name in metrics and activity logs.
    var provider: String {
        switch client {
        case .apns: "apns"
        case .fcm: "fcm"
        case .webPush: "webpush"
        case .wns: "wns"
        }
    }

    /// Sends the batch's payload to each target; the outcomes come in the targets' order.
    func send(_ content: RenderedPush, to targets: [DeliveryTarget]) async -> [DeliveryOutcome] {
        switch client {
        case .apns(let client):
            if let badged = content.badged {
                await send(badged, with: client, to: targets)
            } else {
                await send(content.apns, with: client, to: targets)
            }
        case .fcm(let client, let notification):
            await send(notification ? content.fcmWithNotification : content.fcm, with: client, to: targets)
        case .webPush(let client): await send(content.webPush, with: client, to: targets)
        case .wns(let client): await send(content.wns, with: client, to: targets)
        }
    }

    private func send<Client: ProviderClient>(
        _ notification: Client.Notification?, with client: Client, to targets: [DeliveryTarget]
    ) async -> [DeliveryOutcome] {
        guard let notification else { return targets.map { _ in .failed(reason: "NothingToSend") } }
        let outcomes = await metrics.measured(provider: provider, requests: targets.count) {
            await client.send(notification, to: targets.map(\.token))
        }
        return outcomes.map(Self.outcome)
    }

    /// A push with a relative badge: each group of devices showing the same number gets that
    /// number's notification, the groups at once; the outcomes come in the targets' order.
    private func send(
        _ badged: RenderedPush.BadgedAPNs, with client: APNsPlatformClient, to targets: [DeliveryTarget]
    ) async -> [DeliveryOutcome] {
        var groups: [Int64: [Int]] = [:]
        var outcomes = [DeliveryOutcome](repeating: .failed(reason: "NothingToSend"), count: targets.count)
        for (index, target) in targets.enumerated() {
            if let number = badged.numbers[target.id] { groups[number, default: []].append(index) }
        }
        await withTaskGroup(of: ([Int], [DeliveryOutcome]).self) { group in
            for (number, indexes) in groups {
                group.addTask {
                    (indexes, await send(badged.notifications[number], with: client, to: indexes.map { targets[$0] }))
                }
            }
            for await (indexes, sent) in group {
                for (index, outcome) in zip(indexes, sent) { outcomes[index] = outcome }
            }
        }
        return outcomes
    }

    // MARK: Providers' outcomes in the engine's terms

    /// The one mapper: reasons keep their provider's name, a request not started at shutdown
    /// goes back to the queue.
    static func outcome<Reason>(_ outcome: ProviderOutcome<Reason>) -> DeliveryOutcome {
        switch outcome {
        case .delivered: .delivered
        case .gone(let reason, let since): .gone(reason: "\(reason)", since: since)
        case .retry(let reason, let after): .retry(reason: "\(reason)", after: after)
        case .credentialsRejected(let reason): .credentialsRejected(reason: "\(reason)")
        case .failed(let reason): .failed(reason: "\(reason)")
        case .unanswered(let error) where error == .notStarted: .notAttempted
        case .unanswered(let error): .unanswered(reason: "\(error)")
        }
    }
}
