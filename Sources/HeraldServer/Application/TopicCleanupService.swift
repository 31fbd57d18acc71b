import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

/// Removes the subscriptions of expired (and deleted) topics, then the topics themselves: at
/// start and then every `interval` (an hour), until a graceful shutdown. Expired topics are
/// already invisible to the API and to targeting; this only reclaims their rows, so it need not
/// run soon after an expiry, and an idle server asks the store for it once an hour, not once a
/// minute.
package struct TopicCleanupService: Service {
    let store: Store
    let interval: Duration
    let clock: EpochClock
    let logger: Logger
    let onPass: @Sendable (TopicRepository.Cleanup) -> Void

    /// - Parameters:
    ///   - clock: the wall clock; decides which topics have expired.
    ///   - onPass: called after every pass with what it removed (tests wait on it instead of sleeping).
    package init(
        store: Store, interval: Duration = .seconds(3600), clock: EpochClock = .system, logger: Logger,
        onPass: @escaping @Sendable (TopicRepository.Cleanup) -> Void = { _ in }
    ) {
        self.store = store
        self.interval = interval
        self.clock = clock
        self.logger = logger
        self.onPass = onPass
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                onPass(await cleanUp())
                try await Task.sleep(for: interval)
            }
        }
    }

    /// One pass; failures are logged, and the next pass tries again.
    package func cleanUp() async -> TopicRepository.Cleanup {
        do {
            let cleanup = try await store.topics.removeExpired(at: clock.now.epochMilliseconds)
            if cleanup.topics > 0 || cleanup.subscriptions > 0 {
                logger.info(
                    "removed expired topics",
                    metadata: ["topics": "\(cleanup.topics)", "subscriptions": "\(cleanup.subscriptions)"])
            }
            return cleanup
        } catch {
            logger.error("topic cleanup failed; it runs again later", metadata: ["error": "\(error)"])
            return TopicRepository.Cleanup()
        }
    }
}

extension TopicCleanupService: RedactingDescription {
    /// Its name only: service-lifecycle logs each service it starts, and the default description
    /// would walk the whole store and every provider client it holds.
    package var description: String { "TopicCleanupService" }
}
