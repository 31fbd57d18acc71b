import HeraldCore

import struct Foundation.TimeZone

/// A recurring schedule's rule and progress as stored (`push_schedules.cron`, …): the zone
/// resolved (the app's default when the push named none), or `local` (each device's own zone).
package struct StoredRecurrence: Sendable, Equatable {
    /// The cron expression as given (trimmed).
    package var cron: String
    /// The IANA zone its wall-clock times are read in; empty for a `local` rule.
    package var timeZone: String
    /// Epoch ms after which no occurrence fires (a local-time occurrence: begins).
    package var until: Int64?
    /// At most this many pushes.
    package var count: Int?
    /// Occurrences fired so far.
    package var firedCount: Int
    package var paused: Bool
    /// The cron names floating wall-clock times, each sent at each device's own local time.
    package var local: Bool
    /// A local rule: the wall-clock time of the occurrence `next_at` begins.
    package var nextLocalTime: LocalDateTime?

    package init(
        cron: String, timeZone: String, until: Int64?, count: Int?, firedCount: Int = 0, paused: Bool = false, local: Bool = false,
        nextLocalTime: LocalDateTime? = nil
    ) {
        self.cron = cron
        self.timeZone = timeZone
        self.until = until
        self.count = count
        self.firedCount = firedCount
        self.paused = paused
        self.local = local
        self.nextLocalTime = nextLocalTime
    }

    /// The stored form of a validated rule, in `zone` (the rule's own, or the app's default;
    /// none for a local rule).
    package init(_ recurrence: Recurrence, zone: String) {
        self.init(
            cron: recurrence.cron.description, timeZone: recurrence.local ? "" : recurrence.timeZone ?? zone, until: recurrence.until,
            count: recurrence.count, local: recurrence.local)
    }

    /// The rule and its zone; nil if the stored text no longer reads (never written so), or
    /// for a local rule.
    package var rule: (Recurrence, TimeZone)? {
        guard !local, let cron = try? CronExpression(cron, field: "schedule.cron"), let zone = TimeZone(identifier: timeZone) else {
            return nil
        }
        return (Recurrence(cron: cron, timeZone: timeZone, until: until, count: count), zone)
    }

    /// A local rule; nil for a zoned one.
    package var localRule: Recurrence? {
        guard local, let cron = try? CronExpression(cron, field: "schedule.cron") else { return nil }
        return Recurrence(cron: cron, timeZone: nil, until: until, count: count, local: true)
    }

    /// One occurrence: when it fires (a local one: begins, as the earliest zone reaches it) and,
    /// for a local rule, its wall-clock time.
    package struct Occurrence: Sendable, Equatable {
        package var at: Int64
        package var localTime: LocalDateTime?
    }

    /// The first occurrence after `after` still to fire (`until` and `count` considered).
    package func nextOccurrence(after: Int64) -> Occurrence? {
        if let count, firedCount >= count { return nil }
        if let localRule {
            return localRule.nextLocal(after: after).map { Occurrence(at: $0.beginsAt, localTime: $0.localTime) }
        }
        guard let (rule, zone) = rule else { return nil }
        return rule.next(after: after, in: zone).map { Occurrence(at: $0, localTime: nil) }
    }

    /// When the first occurrence after `after` still to fire comes (`until` and `count` considered).
    package func next(after: Int64) -> Int64? {
        nextOccurrence(after: after)?.at
    }

    /// A local rule's occurrence after the one at `local` (`until` and `count` considered).
    package func nextLocal(after local: LocalDateTime) -> Occurrence? {
        if let count, firedCount >= count { return nil }
        return localRule?.nextLocal(after: local).map { Occurrence(at: $0.beginsAt, localTime: $0.localTime) }
    }

    /// Up to `limit` occurrences after `after`, soonest first (`until` and `count` considered).
    ///
    /// - Parameter next: the stored next occurrence (`next_at`), when `after` is just before it:
    ///   a local rule then starts from `nextLocalTime` rather than searching for it.
    package func upcoming(after: Int64, next: Int64? = nil, limit: Int) -> [Occurrence] {
        if let localRule {
            var first: Recurrence.LocalOccurrence?
            if let next, let nextLocalTime, next == after + 1 {
                first = Recurrence.LocalOccurrence(localTime: nextLocalTime, beginsAt: next)
            } else {
                first = localRule.nextLocal(after: after)
            }
            return localRule.localOccurrences(from: first, fired: firedCount, limit: limit)
                .map { Occurrence(at: $0.beginsAt, localTime: $0.localTime) }
        }
        guard let (rule, zone) = rule else { return [] }
        return rule.occurrences(after: after, in: zone, fired: firedCount, limit: limit).map { Occurrence(at: $0, localTime: nil) }
    }
}

/// One past occurrence of a recurring schedule: fired (its push, with the receipt's counters)
/// or skipped (missed beyond the grace window, with every occurrence up to `skippedUntil`).
package struct PastOccurrence: Sendable, Equatable {
    package enum State: String, Sendable {
        case fired, skipped
    }

    package var dueAt: Int64
    /// A local-time occurrence's wall-clock time (`YYYY-MM-DDTHH:MM:SS`).
    package var localTime: String? = nil
    package var state: State
    /// When it fired, or when the skip was recorded.
    package var recordedAt: Int64
    package var pushID: String?
    package var skippedUntil: Int64?
    /// A late local-time occurrence: how many zones it had reached more than the grace window
    /// before it fired, and so left out (nil: none).
    package var missedTimeZones: Int? = nil
    /// The receipt's status and counters (a fired occurrence whose push still exists).
    package var status: String?
    package var targeted: Int?
    package var delivered: Int?
    package var failed: Int?
}
