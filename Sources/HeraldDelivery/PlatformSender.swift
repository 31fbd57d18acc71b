import HeraldAPNs
import HeraldCore
import HeraldFCM
import HeraldHTTP
import HeraldStore
import HeraldWNS
import HeraldWebPush
import ServiceLifecycle

/// One platform's provider client, ready to send, and how its answers read in the engine's
/// terms (`DeliveryOutcome`).
struct PlatformSender: Sendable {
    enum Client: Sendable {
        /// `bearer` is the provider token to send with (token-based auth), nil with a certificate.
        case apns(APNsClient, topic: String, bearer: String?)
        /// `notification`: the platform's `fcm_notification`.
        case fcm(FCMClient, notification: Bool)
        case webPush(WebPushClient, VAPIDSigner)
        case wns(WNSClient)
    }

    /// Where the provider latency and the requests in flight are recorded.
    var metrics = DeliveryMetrics()
    let client: Client

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
    ///
    /// APNs, FCM and Web Push hand the whole batch to their HTTP/2 connections at once. WNS
    /// (HTTP/1.1) sends `concurrency` requests at a time and, once the process is shutting down,
    /// starts no new one (`notAttempted`).
    func send(_ content: RenderedPush, to targets: [DeliveryTarget], concurrency: Int) async -> [DeliveryOutcome] {
        switch client {
        case .apns(let client, let topic, let bearer):
            guard let notification = content.apns else { return targets.map { _ in .failed(reason: "NothingToSend") } }
            let results = await metrics.measured(provider: "apns", requests: targets.count) {
                await client.send(notification, deviceTokens: targets.map(\.token), topic: topic, bearer: bearer)
            }
            return results.map { Self.outcome($0) }
        case .fcm(let client, let notification):
            guard let message = notification ? content.fcmWithNotification : content.fcm else { return targets.map { _ in .failed(reason: "NothingToSend") } }
            let results = await metrics.measured(provider: "fcm", requests: targets.count) {
                await client.send(message, tokens: targets.map(\.token))
            }
            return results.map { Self.outcome($0) }
        case .webPush(let client, let vapid):
            guard let notification = content.webPush else { return targets.map { _ in .failed(reason: "NothingToSend") } }
            var outcomes = [DeliveryOutcome](repeating: .failed(reason: "InvalidSubscription"), count: targets.count)
            var valid: [(index: Int, subscription: WebPushSubscription)] = []
            for (index, target) in targets.enumerated() {
                if let subscription = try? WebPushSubscription(json: target.token) { valid.append((index, subscription)) }
            }
            let results = await metrics.measured(provider: "webpush", requests: valid.count) {
                await client.send(notification, to: valid.map(\.subscription), vapid: vapid)
            }
            for ((index, _), result) in zip(valid, results) {
                outcomes[index] = Self.outcome(result)
            }
            return outcomes
        case .wns(let client):
            guard let notification = content.wns else { return targets.map { _ in .failed(reason: "NothingToSend") } }
            return await Self.eachConcurrently(targets, concurrency: concurrency) { [metrics] target in
                await metrics.measured(provider: "wns") {
                    do {
                        return Self.outcome(Result<WNSOutcome, any Error>.success(try await client.send(notification, channelURI: target.token)))
                    } catch {
                        return Self.outcome(Result<WNSOutcome, any Error>.failure(error))
                    }
                }
            }
        }
    }

    /// Runs `body` for each target, `concurrency` at a time, stopping early at a graceful shutdown.
    private static func eachConcurrently(
        _ targets: [DeliveryTarget], concurrency: Int, _ body: @escaping @Sendable (DeliveryTarget) async -> DeliveryOutcome
    ) async -> [DeliveryOutcome] {
        var outcomes = [DeliveryOutcome](repeating: .notAttempted, count: targets.count)
        await withTaskGroup(of: (Int, DeliveryOutcome).self) { group in
            var next = 0
            func addNext() {
                guard next < targets.count, !Task.isShuttingDownGracefully else { return }
                let index = next
                next += 1
                group.addTask { (index, await body(targets[index])) }
            }
            for _ in 0..<max(1, concurrency) { addNext() }
            for await (index, outcome) in group {
                outcomes[index] = outcome
                addNext()
            }
        }
        return outcomes
    }

    // MARK: Providers' answers in the engine's terms

    /// The one mapper: a provider's answer (sorted by its own target into a `ProviderOutcome`),
    /// a request that cannot be sent as addressed (`UndeliverableError`), or no answer.
    static func outcome<Outcome: ProviderOutcomeConvertible, Failure: Error>(_ result: Result<Outcome, Failure>) -> DeliveryOutcome {
        switch result {
        case .success(let outcome):
            switch outcome.providerOutcome {
            case .delivered: return .delivered
            case .gone(let since): return .gone(since: since.map { Self.milliseconds($0.sinceEpoch) })
            case .retry(let reason, let after): return .retry(reason: reason, after: after.map { $0.components.seconds })
            case .credentialsRejected(let reason): return .credentialsRejected(reason: reason)
            case .failed(let reason): return .failed(reason: reason)
            }
        case .failure(let error as any UndeliverableError):
            return .failed(reason: error.code)
        case .failure(let error):
            return .unanswered(reason: "\(error)")
        }
    }

    /// Whole milliseconds of `duration`, as the store keeps times.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
