import HeraldStore
import Logging
import ServiceLifecycle

/// The delivery workers: claim jobs from the store and work them until a graceful shutdown,
/// which lets the jobs in hand finish (a job cut short by a crash is taken again when its
/// lease runs out).
public struct DeliveryService: Service {
    private let store: Store
    private let configuration: DeliveryConfiguration
    private let dispatcher: Dispatcher
    private let senders: APNsSenders
    private let logger: Logger

    public init(store: Store, configuration: DeliveryConfiguration, now: @escaping @Sendable () -> Int64 = systemMillis, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.senders = APNsSenders(store: store, configuration: configuration)
        self.dispatcher = Dispatcher(store: store, configuration: configuration, senders: senders, now: now, logger: logger)
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
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if let (job, push) = try await store.pushes.claim(lease: configuration.lease) {
                    try await dispatcher.process(job, push)
                    continue
                }
            } catch {
                logger.error("delivery job failed; it will be taken again when its lease runs out", metadata: ["error": "\(error)"])
            }
            // An idle queue is looked at again shortly; cancelled at shutdown.
            try? await Task.sleep(for: configuration.idlePoll)
        }
    }
}
