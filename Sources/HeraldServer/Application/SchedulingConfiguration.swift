/// How scheduled pushes are accepted and fired.
package struct SchedulingConfiguration: Sendable, Equatable {
    /// A push scheduled less than this far ahead (or in the past) is sent at once, as Pivotal's
    /// `push_scheduler_sendImmediatelyWithin` (60 s by default).
    package var sendImmediatelyWithin: Duration
    /// The longest the scheduler sleeps before looking again: its safety poll. It sleeps
    /// until the earliest pending slot and is woken by a schedule made or changed in this process
    /// or (PostgreSQL) another; this bounds only how late it sees one nobody announced. Nil: the
    /// backend's default (`IdleWait.defaultSafetyPoll(for:)`).
    package var maximumSleep: Duration?
    /// Due slots fired in one transaction.
    package var batchSize: Int
    /// A recurring schedule's occurrence found due at most this long ago still fires (the latest
    /// one, once); older ones (every Herald process down, or far behind) are skipped and
    /// recorded. One hour by default: late enough to survive a restart or a deploy, early enough
    /// that yesterday's "good morning" is not sent in the evening.
    package var missedOccurrenceGrace: Duration

    package init(
        sendImmediatelyWithin: Duration = .seconds(60), maximumSleep: Duration? = nil, batchSize: Int = 200,
        missedOccurrenceGrace: Duration = .seconds(3600)
    ) {
        self.sendImmediatelyWithin = sendImmediatelyWithin
        self.maximumSleep = maximumSleep
        self.batchSize = batchSize
        self.missedOccurrenceGrace = missedOccurrenceGrace
    }
}
