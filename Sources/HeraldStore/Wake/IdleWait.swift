import HeraldCore

/// How a loop that works through due work sleeps once it found none: until the store's earliest
/// due time, or until its kind is announced (`WorkSignals`), and never longer than its safety
/// poll. An idle loop therefore asks the store nothing until something is due or announced.
///
/// Use, per round: read `signal.generation`; look for due work (and work it, then look again);
/// when there is none, ask the store when the next is due; `wait(after:untilDue:)`. Work added
/// between the read and the wait ends the wait at once, so nothing is missed in between.
package struct IdleWait: Sendable {
    /// The signal of the loop's kind of work.
    package let signal: WorkSignal
    package let clock: EpochClock
    /// The longest sleep: bounds how late work nobody announced is found (another process's
    /// retry or expired lease; an announcement lost with the notification connection).
    package let safetyPoll: Duration

    /// The shortest sleep when the store says work is due yet none was taken (another worker is
    /// taking it at this moment): a pause rather than a spin.
    package static let shortest = Duration.milliseconds(5)

    package init(signal: WorkSignal, clock: EpochClock, safetyPoll: Duration) {
        self.signal = signal
        self.clock = clock
        self.safetyPoll = safetyPoll
    }

    /// The safety poll a backend needs when none is configured. PostgreSQL: 5 s, for other
    /// processes' retries and expired leases, which are not announced. SQLite: 10 minutes, since
    /// one process owns the file and announces all of its own work; the poll only bounds how late
    /// a row written by something else (a `herald` command run against the same file) is seen.
    package static func defaultSafetyPoll(for dialect: SQLDialect) -> Duration {
        switch dialect {
        case .postgres: .seconds(5)
        case .sqlite: .seconds(600)
        }
    }

    /// How long to sleep when the next work is due at `next` (nil: none is pending).
    package func duration(untilDue next: EpochClock.Instant?) -> Duration {
        guard let next else { return safetyPoll }
        return min(safetyPoll, max(Self.shortest, clock.now.duration(to: next)))
    }

    /// Sleeps until `next`, at most the safety poll, unless the signal rings (or rang) after
    /// `generation`, or the task is cancelled.
    package func wait(after generation: UInt64, untilDue next: EpochClock.Instant?) async {
        await signal.wait(after: generation, upTo: duration(untilDue: next))
    }
}
