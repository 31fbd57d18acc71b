import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

/// The webhook workers: claim queued deliveries from the store (leased, so that across
/// processes one delivery is in one worker's hands at a time), POST them signed, and record the
/// answer: delivered, due again after a backoff, or failed once the retry window is over.
/// At least once: a worker that crashes after the POST but before recording it leaves the
/// delivery to be sent again when its lease runs out (receivers de-duplicate on the event id).
public struct WebhookService: Service {
    private let store: Store
    private let configuration: WebhookConfiguration
    private let clock: EpochClock
    private let logger: Logger
    private let sender: WebhookSender
    private let backoff: WebhookBackoff

    /// - Parameter clock: the wall clock for signatures and retry times (tests move one by hand;
    ///   it should be the store's).
    public init(store: Store, configuration: WebhookConfiguration, clock: EpochClock = .system, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.sender = WebhookSender(configuration: configuration, clock: clock)
        self.backoff = WebhookBackoff(
            first: configuration.firstRetryDelay, maximum: configuration.maximumRetryDelay, window: configuration.retryWindow)
    }

    public func run() async throws {
        guard configuration.workers > 0 else {
            try? await gracefulShutdown()
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<configuration.workers {
                group.addTask { await self.work() }
            }
        }
    }

    private func work() async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let seen = store.webhooks.newEvents.generation
            do {
                if let delivery = try await store.webhooks.claim(lease: configuration.lease.milliseconds) {
                    try await deliver(delivery)
                    continue
                }
            } catch let error as StoreError where error.reason == .leaseLost {
                logger.warning("a webhook delivery's lease ran out and another worker took it over", metadata: ["error": "\(error)"])
            } catch where Task.isCancelled {
                return
            } catch {
                logger.error("webhook delivery failed; it is taken again when its lease runs out", metadata: ["error": "\(error)"])
            }
            await waitForEvents(after: seen)
        }
    }

    /// The one place an idle worker waits: woken when this process queues an event, else after
    /// `idlePoll` for retries coming due and other processes' events. (A database notification
    /// from other processes can wake it here too, once the store has one.)
    private func waitForEvents(after seen: UInt64) async {
        await store.webhooks.newEvents.wait(after: seen, upTo: configuration.idlePoll)
    }

    /// Sends one delivery and records what came of it.
    func deliver(_ delivery: WebhookDelivery) async throws {
        let answer = await sender.send(delivery)
        let attempts = delivery.attempts + 1
        let retryAt = answer.succeeded ? nil : backoff.retryAt(attempts: attempts, createdAt: delivery.createdAt, now: clock.now.epochMilliseconds)
        if !answer.succeeded {
            logger.info(
                "a webhook delivery failed",
                metadata: [
                    "endpoint": "\(delivery.endpointID)", "event": "\(delivery.eventID)", "attempts": "\(attempts)",
                    "status": "\(answer.status.map(String.init) ?? "-")", "error": "\(answer.error ?? "-")",
                    "retry": "\(retryAt.map(String.init) ?? "given up")",
                ])
        }
        try await store.webhooks.record(
            delivery,
            WebhookAttempt(status: answer.status, error: answer.error, excerpt: answer.excerpt, succeeded: answer.succeeded, retryAt: retryAt))
    }
}

extension WebhookService: RedactingDescription {
    public var description: String { "WebhookService" }
}
