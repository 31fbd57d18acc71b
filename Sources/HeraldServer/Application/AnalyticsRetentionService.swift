import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

/// Deletes raw analytics events older than the retention period, at start and then every
/// `cleanupInterval`, until a graceful shutdown. The aggregates stay.
package struct AnalyticsRetentionService: Service {
    let store: Store
    let configuration: AnalyticsConfiguration
    let clock: EpochClock
    let logger: Logger

    package init(store: Store, configuration: AnalyticsConfiguration, clock: EpochClock = .system, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                _ = await cleanUp()
                try await Task.sleep(for: configuration.cleanupInterval)
            }
        }
    }

    /// One cleanup; returns how many events went. Failures are logged, and the next run tries again.
    package func cleanUp() async -> Int {
        do {
            let deleted = try await store.analytics.deleteEvents(receivedBefore: configuration.cutoff(now: clock.now.epochMilliseconds))
            if deleted > 0 {
                logger.info(
                    "deleted raw analytics events past retention",
                    metadata: ["count": "\(deleted)", "retention_days": "\(configuration.retentionDays)"])
            }
            return deleted
        } catch {
            logger.error("analytics cleanup failed; it runs again later", metadata: ["error": "\(error)"])
            return 0
        }
    }
}

extension AnalyticsRetentionService: RedactingDescription {
    /// Its name only: service-lifecycle logs each service it starts, and the default description
    /// would walk the whole store and every provider client it holds.
    package var description: String { "AnalyticsRetentionService" }
}
