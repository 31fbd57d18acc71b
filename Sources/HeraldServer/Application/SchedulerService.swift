import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging
import ServiceLifecycle

/// Fires scheduled pushes when they are due, until a graceful shutdown.
///
/// It sleeps until the earliest pending slot, or until a schedule is made or changed (announced
/// as `WorkKind.scheduledPushes`, by this process or, on PostgreSQL, another), but never longer
/// than `SchedulingConfiguration.maximumSleep`. Idle, it asks the store nothing. Slots missed
/// while no server ran are due at once at start-up; a recurring schedule's missed occurrences
/// fire once if within `SchedulingConfiguration.missedOccurrenceGrace`, else are skipped. Several processes on one PostgreSQL database each fire disjoint slots (see
/// `ScheduleRepository.fireDue`).
package struct SchedulerService: Service {
    let store: Store
    let configuration: SchedulingConfiguration
    let clock: EpochClock
    /// Nil: wait on the `scheduledPushes` signal (`IdleWait`).
    let sleep: (@Sendable (Duration) async throws -> Void)?
    let logger: Logger
    /// Where each firing's lateness goes (`herald_scheduler_lateness_seconds`).
    let metrics: DeliveryMetrics

    /// - Parameters:
    ///   - clock: the wall clock (the store fires by its own clock; tests give both the same).
    ///   - sleep: waits this long (tests inject their own); by default the wait ends early when a
    ///     schedule is announced.
    package init(
        store: Store, configuration: SchedulingConfiguration, clock: EpochClock = .system,
        sleep: (@Sendable (Duration) async throws -> Void)? = nil,
        logger: Logger, metrics: DeliveryMetrics = DeliveryMetrics()
    ) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.sleep = sleep
        self.logger = logger
        self.metrics = metrics
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            let signal = store.work.signal(for: .scheduledPushes)
            while !Task.isCancelled {
                // Read before looking, so that a schedule made meanwhile ends the wait at once.
                let seen = signal.generation
                let wait = await tick()
                if let sleep {
                    try await sleep(wait)
                } else {
                    await signal.wait(after: seen, upTo: wait)
                }
            }
        }
    }

    /// One round: fires every due slot, then says how long to sleep.
    package func tick() async -> Duration {
        do {
            while !Task.isCancelled {
                let fired = try await store.schedules.fireDue(limit: configuration.batchSize, grace: configuration.missedOccurrenceGrace)
                for slot in fired {
                    metrics.schedulerLateness(.milliseconds(slot.firedAt - slot.dueAt))
                    logger.debug(
                        "fired a scheduled push",
                        metadata: [
                            "schedule_id": "\(slot.scheduleID)", "receipt_id": "\(slot.pushID.lowercasedString)",
                            "late_ms": "\(slot.firedAt - slot.dueAt)",
                        ])
                }
                if fired.count < configuration.batchSize { break }
            }
            let next = try await store.schedules.nextDue().map(EpochClock.Instant.init(epochMilliseconds:))
            return Self.wait(until: next, now: clock.now, maximum: maximumSleep)
        } catch {
            logger.error("firing scheduled pushes failed; the scheduler tries again shortly", metadata: ["error": "\(error)"])
            return min(maximumSleep, .seconds(1))
        }
    }

    /// The safety poll: configured, or the backend's default.
    var maximumSleep: Duration {
        configuration.maximumSleep ?? IdleWait.defaultSafetyPoll(for: store.database.dialect)
    }

    /// How long from `now` to `next` (zero when due), at most `maximum`.
    static func wait(until next: EpochClock.Instant?, now: EpochClock.Instant, maximum: Duration) -> Duration {
        guard let next else { return maximum }
        return min(maximum, max(.zero, now.duration(to: next)))
    }
}

extension SchedulerService: RedactingDescription {
    /// Its name only: service-lifecycle logs each service it starts, and the default description
    /// would walk the whole store and every provider client it holds.
    package var description: String { "SchedulerService" }
}
