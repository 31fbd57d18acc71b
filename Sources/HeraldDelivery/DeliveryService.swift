import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

/// The delivery workers: claim jobs from the store and work them until a graceful shutdown,
/// which lets the jobs in hand finish or put them back (see `Dispatcher`). A worker renews its
/// job's lease while it works, so the lease can be short: a job cut short by a crash is taken
/// again soon after its lease runs out.
public struct DeliveryService: Service {
    private let store: Store
    private let configuration: DeliveryConfiguration
    private let dispatcher: Dispatcher
    private let senders: Senders
    private let logger: Logger
    private let telemetry: DeliveryTelemetry

    /// - Parameters:
    ///   - clock: the wall clock the workers read (tests inject one they move by hand).
    ///   - telemetry: where metrics, the apps' activity and the workers' status go.
    public init(
        store: Store, configuration: DeliveryConfiguration, clock: EpochClock = .system, logger: Logger,
        telemetry: DeliveryTelemetry = DeliveryTelemetry()
    ) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.telemetry = telemetry
        self.senders = Senders(
            store: store, configuration: configuration, clock: clock, telemetry: telemetry)
        self.dispatcher = Dispatcher(
            store: store, configuration: configuration, senders: senders, clock: clock, logger: logger, telemetry: telemetry)
    }

    public func run() async throws {
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
            // Read before the claim, so that a push accepted between an empty claim and the wait
            // below ends the wait at once.
            let seen = store.newWork.generation
            do {
                if let claimed = try await store.pushes.claim(lease: configuration.lease.milliseconds) {
                    try await holdingLease(of: claimed.job) {
                        try await dispatcher.process(claimed)
                    }
                    continue
                }
            } catch let error as StoreError where error.reason == .leaseLost {
                logger.warning("a delivery job's lease ran out and another worker took it over", metadata: ["error": "\(error)"])
            } catch {
                logger.error("delivery job failed; it will be taken again when its lease runs out", metadata: ["error": "\(error)"])
            }
            // An idle queue is looked at again when this process queues a push, or after
            // `idlePoll` for work from elsewhere (other processes, retries, expired leases).
            await store.newWork.wait(after: seen, upTo: configuration.idlePoll)
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
    public var description: String { "DeliveryService" }
}
