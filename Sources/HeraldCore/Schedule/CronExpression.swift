import struct Foundation.TimeZone

/// A five-field cron expression (`minute hour day-of-month month day-of-week`) for recurring
/// schedules, read once into sets of allowed values.
///
/// Each field takes `*`, a value, a range `a-b`, a step `*/n`, `a-b/n` or `a/n` (from a to the
/// field's end), or a comma-separated list of these. Months take `JAN`–`DEC`, days of the week
/// `SUN`–`SAT` (0–7, both 0 and 7 Sunday), without regard to case. `@yearly`, `@annually`,
/// `@monthly`, `@weekly`, `@daily`, `@midnight` and `@hourly` stand for their usual expressions.
/// As in every cron since Vixie's, when both day fields are restricted a day matching either
/// one matches.
package struct CronExpression: Sendable, Hashable, CustomStringConvertible {
    /// Bit n set: the value n is allowed.
    private(set) var minutes: UInt64 = 0
    private(set) var hours: UInt32 = 0
    private(set) var daysOfMonth: UInt32 = 0
    private(set) var months: UInt16 = 0
    /// Sunday is bit 0.
    private(set) var daysOfWeek: UInt8 = 0
    private var dayOfMonthRestricted = false
    private var dayOfWeekRestricted = false
    /// The text it was read from, trimmed.
    package let description: String

    /// How many minutes of an hour it allows: 1 for a rule that fires at most once an hour.
    package var minutesPerHour: Int { minutes.nonzeroBitCount }

    /// Reads `text`; errors name `field` (`schedule.cron`).
    package init(_ text: String, field: String) throws(ValidationError) {
        let trimmed = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        description = trimmed
        let expanded = Self.macros[trimmed.lowercased()] ?? trimmed
        let parts = expanded.split(separator: " ").map(String.init)
        guard parts.count == 5 else {
            throw ValidationError(
                code: "invalid_cron",
                message: "a cron expression has five fields (minute hour day-of-month month day-of-week), got \(parts.count)",
                field: field)
        }
        func read(_ index: Int, _ spec: FieldSpec) throws(ValidationError) -> UInt64 {
            do {
                return try spec.parse(parts[index])
            } catch let problem {
                throw ValidationError(code: "invalid_cron", message: "\(spec.name) '\(parts[index])': \(problem.reason)", field: field)
            }
        }
        minutes = try read(0, .minute)
        hours = UInt32(try read(1, .hour))
        daysOfMonth = UInt32(try read(2, .dayOfMonth))
        months = UInt16(try read(3, .month))
        var weekdays = try read(4, .dayOfWeek)
        if weekdays & (1 << 7) != 0 { weekdays = (weekdays | 1) & ~(1 << 7) }  // 7 is Sunday too
        daysOfWeek = UInt8(weekdays)
        dayOfMonthRestricted = !parts[2].hasPrefix("*")
        dayOfWeekRestricted = !parts[4].hasPrefix("*")
        guard dayOfWeekRestricted || canFallOnADate else {
            throw ValidationError(
                code: "invalid_cron", message: "'\(trimmed)' names no day that exists in the months it allows", field: field)
        }
    }

    /// Whether some allowed month has some allowed day of the month (February counted with 29).
    private var canFallOnADate: Bool {
        (1...12).contains { month in
            months & (1 << month) != 0
                && (1...LocalDateTime.days(inMonth: month, year: 2000)).contains { daysOfMonth & (1 << $0) != 0 }
        }
    }

    // MARK: Occurrences

    /// The first time after `after` (epoch milliseconds) at which the expression's wall-clock time
    /// comes in `zone`, in epoch milliseconds; nil if none within eight years.
    ///
    /// Daylight-saving changes: a wall-clock time skipped by a change falls at the first instant
    /// after the gap (as `LocalDateTime` does for `scheduleLocal`); a wall-clock time that comes
    /// twice when clocks go back fires once, at its first coming.
    package func nextOccurrence(after: Int64, in zone: TimeZone) -> Int64? {
        var conversions = 0
        return nextOccurrence(after: after, in: zone, conversions: &conversions)
    }

    /// `nextOccurrence(after:in:)`, counting in `conversions` the wall-clock times it turned
    /// into instants (the costly step; tests check it stays small).
    func nextOccurrence(after: Int64, in zone: TimeZone, conversions: inout Int) -> Int64? {
        // A wall-clock time f (read as UTC) comes at f minus the zone's offset then, so never
        // later than f minus the lowest offset the zone has around `after` (sampled a day either
        // side, which catches a daylight-saving change): a time with f - lowest <= after cannot
        // be the answer and is not converted. The walk starts on the first day that can hold
        // one, and converts only the minutes that can; a minutely rule costs one or two
        // conversions, not a day's worth.
        let lowest =
            [-86_400_000, 0, 86_400_000].map { shift in
                Int64(zone.secondsFromGMT(for: .init(timeIntervalSince1970: Double(after + Int64(shift)) / 1000))) * 1000
            }.min() ?? 0
        let threshold = after + lowest
        let startDay = Int(threshold >= 0 ? threshold / 86_400_000 : (threshold - 86_399_999) / 86_400_000)
        for day in startDay..<(startDay + 366 * 8) {
            let (year, month, dayOfMonth) = LocalDateTime.civil(fromDaysSinceEpoch: day)
            guard months & (1 << month) != 0, matches(day: day, dayOfMonth: dayOfMonth) else { continue }
            let dayStart = Int64(day) * 86_400_000
            for hour in 0..<24 where hours & (1 << hour) != 0 {
                guard dayStart + Int64(hour + 1) * 3_600_000 > threshold else { continue }
                for minute in 0..<60 where minutes & (1 << minute) != 0 {
                    guard dayStart + Int64(hour) * 3_600_000 + Int64(minute) * 60_000 > threshold,
                        let local = LocalDateTime(year: year, month: month, day: dayOfMonth, hour: hour, minute: minute)
                    else { continue }
                    conversions += 1
                    let instant = local.instant(in: zone)
                    if instant > after { return instant }
                }
            }
        }
        return nil
    }

    private func matches(day: Int, dayOfMonth: Int) -> Bool {
        // 1970-01-01 was a Thursday (4).
        let weekday = ((day % 7) + 7 + 4) % 7
        let byDate = daysOfMonth & (1 << dayOfMonth) != 0
        let byWeekday = daysOfWeek & (1 << weekday) != 0
        switch (dayOfMonthRestricted, dayOfWeekRestricted) {
        case (true, true): return byDate || byWeekday
        case (true, false): return byDate
        case (false, true): return byWeekday
        case (false, false): return true
        }
    }

    private static let macros: [String: String] = [
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
        "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
    ]
}

// MARK: Fields

extension CronExpression {
    /// What one field allows and how its values are named.
    struct FieldSpec {
        let name: String
        let range: ClosedRange<Int>
        let names: [String: Int]

        static let minute = FieldSpec(name: "minute", range: 0...59, names: [:])
        static let hour = FieldSpec(name: "hour", range: 0...23, names: [:])
        static let dayOfMonth = FieldSpec(name: "day of month", range: 1...31, names: [:])
        static let month = FieldSpec(
            name: "month", range: 1...12,
            names: [
                "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
            ])
        static let dayOfWeek = FieldSpec(
            name: "day of week", range: 0...7, names: ["sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6])

        struct Problem: Error {
            let reason: String
        }

        /// The allowed values as bits.
        func parse(_ text: String) throws(Problem) -> UInt64 {
            var bits: UInt64 = 0
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard !item.isEmpty else { throw Problem(reason: "an empty list item") }
                let stepParts = item.split(separator: "/", omittingEmptySubsequences: false)
                guard stepParts.count <= 2 else { throw Problem(reason: "more than one '/' in '\(item)'") }
                var step = 1
                if stepParts.count == 2 {
                    guard let parsed = Int(stepParts[1]), parsed >= 1, parsed <= range.upperBound else {
                        throw Problem(reason: "the step '\(stepParts[1])' is not a number from 1 to \(range.upperBound)")
                    }
                    step = parsed
                }
                let base = stepParts[0]
                var low: Int
                var high: Int
                if base == "*" {
                    (low, high) = (range.lowerBound, range.upperBound)
                } else {
                    let bounds = base.split(separator: "-", omittingEmptySubsequences: false)
                    guard bounds.count <= 2 else { throw Problem(reason: "more than one '-' in '\(base)'") }
                    low = try value(bounds[0])
                    // `a/n` runs from a to the field's end.
                    high = bounds.count == 2 ? try value(bounds[1]) : (stepParts.count == 2 ? range.upperBound : low)
                    guard low <= high else { throw Problem(reason: "the range \(base) runs backwards") }
                }
                for value in stride(from: low, through: high, by: step) { bits |= 1 << UInt64(value) }
            }
            return bits
        }

        private func value(_ text: Substring) throws(Problem) -> Int {
            if let number = Int(text), text.allSatisfy(\.isASCII) {
                guard range.contains(number) else {
                    throw Problem(reason: "\(number) is outside \(range.lowerBound)–\(range.upperBound)")
                }
                return number
            }
            if let named = names[text.lowercased()] { return named }
            throw Problem(reason: "'\(text)' is not a value of this field")
        }
    }
}
