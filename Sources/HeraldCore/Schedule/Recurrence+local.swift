import struct Foundation.TimeZone

/// A recurring rule in each device's own local time (`"schedule": {"cron", "local": true}`): the
/// cron names floating wall-clock times. Each occurrence is one such time, which comes in every
/// zone at its own instant; those instants are grouped exactly as a one-time `scheduleLocal`
/// push's slots (`PushSchedule.slots`, with its daylight-saving rules), and the occurrence
/// begins (is due) when the earliest zone on Earth reaches it.
extension Recurrence {
    /// One occurrence of a local-time rule.
    package struct LocalOccurrence: Sendable, Equatable {
        /// The wall-clock time every device receives it at.
        package var localTime: LocalDateTime
        /// When the first zone reaches it (epoch ms): the earliest of its slots.
        package var beginsAt: Int64

        package init(localTime: LocalDateTime, beginsAt: Int64) {
            self.localTime = localTime
            self.beginsAt = beginsAt
        }
    }

    /// UTC, where a floating wall-clock time is read as a number (`floatingMilliseconds`).
    static var floatingZone: TimeZone { TimeZone(secondsFromGMT: 0) ?? .current }

    /// The first instant (epoch ms) any zone reaches `local`: the earliest of the slots a
    /// `scheduleLocal` push for it would have.
    package static func beginning(of local: LocalDateTime) -> Int64 {
        PushSchedule.slots(for: local, defaultZone: "UTC").first?.dueAt ?? local.instant(in: floatingZone)
    }

    /// The first occurrence that begins after `after` (epoch ms); nil when none begins on or
    /// before `until`, or within eight years.
    package func nextLocal(after: Int64) -> LocalOccurrence? {
        // When a wall-clock time begins only grows with the time (each zone's instant does, the
        // daylight-saving rules included, and so does their earliest). It begins no later than in
        // UTC (the time itself, read as UTC) and no earlier than 14 h before (no zone is further
        // ahead), so a binary search over the whole minutes of (after, after + 15 h] finds the
        // first wall-clock time that begins after `after` in ten steps; the rule's first time from
        // there is the answer.
        func beginsAfter(_ floating: Int64) -> Bool {
            guard let local = LocalDateTime(floatingMilliseconds: floating) else { return true }
            return Self.beginning(of: local) > after
        }
        let minute: Int64 = 60_000
        var low = (after >= 0 ? after / minute : (after - minute + 1) / minute) * minute
        var high = low + 15 * 60 * minute
        while !beginsAfter(high) {
            (low, high) = (high, high + 15 * 60 * minute)
        }
        while high - low > minute {
            let middle = low + (high - low) / (2 * minute) * minute
            if beginsAfter(middle) { high = middle } else { low = middle }
        }
        return localOccurrence(afterFloating: high - 1)
    }

    /// The occurrence after the one at `local` (its next wall-clock time); nil when none begins on
    /// or before `until`.
    package func nextLocal(after local: LocalDateTime) -> LocalOccurrence? {
        localOccurrence(afterFloating: local.floatingMilliseconds)
    }

    /// Up to `limit` occurrences from `first` on, soonest first; `fired` occurrences already sent
    /// count towards `count`.
    package func localOccurrences(from first: LocalOccurrence?, fired: Int, limit: Int) -> [LocalOccurrence] {
        var result: [LocalOccurrence] = []
        let left = count.map { max(0, $0 - fired) } ?? limit
        var current = first
        while result.count < min(limit, left), let occurrence = current {
            result.append(occurrence)
            current = nextLocal(after: occurrence.localTime)
        }
        return result
    }

    private func localOccurrence(afterFloating floating: Int64) -> LocalOccurrence? {
        guard let next = cron.nextOccurrence(after: floating, in: Self.floatingZone),
            let local = LocalDateTime(floatingMilliseconds: next)
        else { return nil }
        let begins = Self.beginning(of: local)
        if let until, begins > until { return nil }
        return LocalOccurrence(localTime: local, beginsAt: begins)
    }
}
