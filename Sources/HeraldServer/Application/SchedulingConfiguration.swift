/// How scheduled pushes are accepted and fired.
public struct SchedulingConfiguration: Sendable, Equatable {
    /// A push scheduled less than this many milliseconds ahead (or in the past) is sent at once,
    /// as Pivotal's `push_scheduler_sendImmediatelyWithin` (60 s by default).
    public var sendImmediatelyWithin: Int64
    /// The longest the scheduler sleeps before looking again (ms), so that it sees schedules
    /// made by other processes in time.
    public var maximumSleep: Int64
    /// Due slots fired in one transaction.
    public var batchSize: Int

    public init(sendImmediatelyWithin: Int64 = 60_000, maximumSleep: Int64 = 1000, batchSize: Int = 200) {
        self.sendImmediatelyWithin = sendImmediatelyWithin
        self.maximumSleep = maximumSleep
        self.batchSize = batchSize
    }
}
