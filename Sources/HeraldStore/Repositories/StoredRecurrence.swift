import HeraldCore
import struct Foundation.TimeZone

/// A recurring schedule's rule and progress as stored (`push_schedules.cron`, …): the zone
/// resolved (the app's default when the push named none).
public struct StoredRecurrence: Sendable, Equatable {
    /// The cron expression as given (trimmed).
    public var cron: String
    /// The IANA zone its wall-clock times are read in.
    public var timeZone: String
    /// Epoch ms after which no occurrence fires.
    public var until: Int64?
    /// At most this many pushes.
    public var count: Int?
    /// Occurrences fired so far.
    public var firedCount: Int
    public var paused: Bool

    public init(cron: String, timeZone: String, until: Int64?, count: Int?, firedCount: Int = 0, paused: Bool = false) {
        self.cron = cron
        self.timeZone = timeZone
        self.until = until
        self.count = count
        self.firedCount = firedCount
        self.paused = paused
    }

    /// The stored form of a validated rule, in `zone` (the rule's own, or the app's default).
    public init(_ recurrence: Recurrence, zone: String) {
        self.init(cron: recurrence.cron.description, timeZone: recurrence.timeZone ?? zone, until: recurrence.until, count: recurrence.count)
    }

    /// The rule and its zone; nil if the stored text no longer reads (never written so).
    public var rule: (Recurrence, TimeZone)? {
        guard let cron = try? CronExpression(cron, field: "schedule.cron"), let zone = TimeZone(identifier: timeZone) else { return nil }
        return (Recurrence(cron: cron, timeZone: timeZone, until: until, count: count), zone)
    }

    /// The first occurrence after `after` still to fire (`until` and `count` considered).
    public func next(after: Int64) -> Int64? {
        guard let (rule, zone) = rule else { return nil }
        if let count, firedCount >= count { return nil }
        return rule.next(after: after, in: zone)
    }

    /// Up to `limit` occurrences after `after`, soonest first (`until` and `count` considered).
    public func upcoming(after: Int64, limit: Int) -> [Int64] {
        guard let (rule, zone) = rule else { return [] }
        return rule.occurrences(after: after, in: zone, fired: firedCount, limit: limit)
    }
}

/// One past occurrence of a recurring schedule: fired (its push, with the receipt's counters)
/// or skipped (missed beyond the grace window, with every occurrence up to `skippedUntil`).
public struct PastOccurrence: Sendable, Equatable {
    public enum State: String, Sendable {
        case fired, skipped
    }

    public var dueAt: Int64
    public var state: State
    /// When it fired, or when the skip was recorded.
    public var recordedAt: Int64
    public var pushID: String?
    public var skippedUntil: Int64?
    /// The receipt's status and counters (a fired occurrence whose push still exists).
    public var status: String?
    public var targeted: Int?
    public var delivered: Int?
    public var failed: Int?
}
