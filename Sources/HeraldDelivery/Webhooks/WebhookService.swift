import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

/// The webhook workers: claim queued deliveries from the store (leased, so that across
/// processes one delivery is in one worker's hands at a time), POST them signed, and record the
/// answer: delivered, due again after a backoff, or failed once the retry window is over.
/// At least once: a worker that crashes after the POST but before recording it leaves the
/// delivery to be sent again when its lease runs out (receivers de-duplicate on the event id).
package struct WebhookService: Service {
    private let store: Store
    private let configuration: WebhookConfiguration
    private let clock: EpochClock
    private let logger: Logger
    private let sender: WebhookSender
    private let backoff: WebhookBackoff
    /// How an idle worker sleeps: until the next delivery is due or one is queued.
    private let idle: IdleWait

    /// - Parameter clock: the wall clock for signatures and retry times (tests move one by hand;
    ///   it should be the store's).
    package init(store: Store, configuration: WebhookConfiguration, clock: EpochClock = .system, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.sender = WebhookSender(configuration: configuration, clock: clock)
        self.backoff = WebhookBackoff(
            first: configuration.firstRetryDelay, maximum: configuration.maximumRetryDelay, window: configuration.retryWindow)
        self.idle = IdleWait(
            signal: store.work.signal(for: .webhookEvents), clock: clock,
            safetyPoll: configuration.idlePoll ?? IdleWait.defaultSafetyPoll(for: store.database.dialect))
    }

    package func run() async throws {
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
            // Read before the claim, so that an event queued between an empty claim and the wait
            // below ends the wait at once.
            let seen = idle.signal.generation
            // After a failure, a short pause before looking again.
            var next: EpochClock.Instant? = clock.now.advanced(by: .milliseconds(200))
            do {
                if let delivery = try await store.webhooks.claim(lease: configuration.lease.milliseconds) {
                    try await deliver(delivery)
                    continue
                }
                next = try await store.webhooks.nextDue().map(EpochClock.Instant.init(epochMilliseconds:))
            } catch let error as StoreError where error.reason == .leaseLost {
                logger.warning("a webhook delivery's lease ran out and another worker took it over", metadata: ["error": "\(error)"])
            } catch  where Task.isCancelled {
                return
            } catch {
                logger.error("webhook delivery failed; it is taken again when its lease runs out", metadata: ["error": "\(error)"])
            }
            // Nothing due: sleep until the next delivery is (a retry, a lease running out), or
            // until an event is queued, here or (PostgreSQL) by another process. A graceful
            // shutdown ends the sleep too.
            await withGracefulShutdownHandler {
                await idle.wait(after: seen, untilDue: next)
            } onGracefulShutdown: {
                idle.signal.ring()
            }
        }
    }

    /// Sends one delivery and records what came of it.
    func deliver(_ delivery: WebhookDelivery) async throws {
        let answer = await sender.send(delivery)
        let attempts = delivery.attempts + 1
        let retryAt =
            answer.succeeded ? nil : backoff.retryAt(attempts: attempts, createdAt: delivery.createdAt, now: clock.now.epochMilliseconds)
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
            WebhookAttempt(
                status: answer.status, error: answer.error, excerpt: answer.excerpt, succeeded: answer.succeeded, retryAt: retryAt))
    }
}

extension WebhookService: RedactingDescription {
    package var description: String { "WebhookService" }
}
