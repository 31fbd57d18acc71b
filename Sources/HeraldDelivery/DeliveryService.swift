import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

/// The delivery workers: claim jobs from the store and work them until a graceful shutdown,
/// which lets the jobs in hand finish or put them back (see `Dispatcher`). A worker renews its
/// job's lease while it works, so the lease can be short: a job cut short by a crash is taken
/// again soon after its lease runs out.
package struct DeliveryService: Service {
    private let store: Store
    private let configuration: DeliveryConfiguration
    private let dispatcher: Dispatcher
    private let senders: Senders
    private let logger: Logger
    private let telemetry: DeliveryTelemetry
    private let idle: IdleWait

    /// - Parameters:
    ///   - clock: the wall clock the workers read (tests inject one they move by hand).
    ///   - telemetry: where metrics, the apps' activity and the workers' status go.
    package init(
        store: Store, configuration: DeliveryConfiguration, clock: EpochClock = .system, logger: Logger,
        telemetry: DeliveryTelemetry = DeliveryTelemetry()
    ) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.telemetry = telemetry
        self.idle = IdleWait(
            signal: store.work.signal(for: .deliveryJobs), clock: clock,
            safetyPoll: configuration.idlePoll ?? IdleWait.defaultSafetyPoll(for: store.database.dialect))
        self.senders = Senders(
            store: store, configuration: configuration, clock: clock, telemetry: telemetry)
        self.dispatcher = Dispatcher(
            store: store, configuration: configuration, senders: senders, clock: clock, logger: logger, telemetry: telemetry)
    }

    package func run() async throws {
        guard configuration.workers > 0 else {
            // An API-only process: nothing to do but wait for the shutdown.
            try? await gracefulShutdown()
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(0, configuration.workers) {
                group.addTask { await self.work() }
            }
        }
        await senders.shutdown()
    }

    private func work() async {
        telemetry.workers.started()
        defer { telemetry.workers.stopped() }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            // Read before the claim, so that a job queued between an empty claim and the wait
            // below ends the wait at once.
            let seen = idle.signal.generation
            // After a failure (of the store, or of a job), a short pause before looking again.
            var next: EpochClock.Instant? = idle.clock.now.advanced(by: .milliseconds(200))
            do {
                if let claimed = try await store.pushes.claim(lease: configuration.lease.milliseconds) {
                    try await holdingLease(of: claimed.job) {
                        try await dispatcher.process(claimed)
                    }
                    continue
                }
                next = try await store.pushes.nextDue().map(EpochClock.Instant.init(epochMilliseconds:))
            } catch let error as StoreError where error.reason == .leaseLost {
                logger.warning("a delivery job's lease ran out and another worker took it over", metadata: ["error": "\(error)"])
                continue
            } catch  where Task.isCancelled {
                // Not a fault: the process is stopping without a graceful shutdown's wait.
                logger.info("a delivery job was interrupted by cancellation; it will be taken again when its lease runs out")
            } catch {
                logger.error("delivery job failed; it will be taken again when its lease runs out", metadata: ["error": "\(error)"])
            }
            // Nothing due: sleep until the next job is (a retry, a delayed push, a lease running
            // out), or until work is announced, here or (PostgreSQL) by another process. A
            // graceful shutdown ends the sleep too (the loop then stops).
            await withGracefulShutdownHandler {
                await idle.wait(after: seen, untilDue: next)
            } onGracefulShutdown: {
                idle.signal.ring()
            }
        }
    }

    /// Runs `body` while renewing `job`'s lease every third of it.
    private func holdingLease(of job: PushJob, _ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                let interval = max(.milliseconds(10), configuration.lease / 3)
                while true {
                    try await Task.sleep(for: interval)
                    do {
                        try await store.pushes.renew(job, lease: configuration.lease.milliseconds)
                    } catch let error as StoreError where error.reason == .leaseLost {
                        // Another worker has the job; what this one records will be refused.
                        return
                    } catch {
                        if Task.isCancelled { return }
                        logger.warning("could not renew a delivery job's lease", metadata: ["job": "\(job.id)", "error": "\(error)"])
                    }
                }
            }
            defer { group.cancelAll() }
            try await body()
        }
    }
}

extension DeliveryService: RedactingDescription {
    /// Its name only: service-lifecycle logs each service it starts, and the default description
    /// would walk the whole store and every provider client it holds.
    package var description: String { "DeliveryService" }
}
