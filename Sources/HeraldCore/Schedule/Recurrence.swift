import struct Foundation.TimeZone

/// A recurring schedule's rule (`"schedule": {"cron", "time_zone" or "local", "until", "count"}`
/// on a push): when its occurrences come and when it ends.
package struct Recurrence: Sendable, Equatable {
    /// The five-field expression.
    package var cron: CronExpression
    /// The IANA zone its wall-clock times are read in; nil: the app's default zone, resolved
    /// when the schedule is stored, or, with `local`, each device's own zone.
    package var timeZone: String?
    /// `schedule.local`: the wall-clock times are floating, each reached in each device's own
    /// zone (see `Recurrence+local`).
    package var local: Bool = false
    /// Epoch milliseconds after which no occurrence fires (inclusive bound).
    package var until: Int64?
    /// At most this many occurrences fire (pushes sent; skipped occurrences are not counted).
    package var count: Int?

    package init(cron: CronExpression, timeZone: String?, until: Int64?, count: Int?, local: Bool = false) {
        self.cron = cron
        self.timeZone = timeZone
        self.local = local
        self.until = until
        self.count = count
    }

    /// The first occurrence after `after` (epoch ms) in `zone`, nil when none comes on or
    /// before `until`.
    package func next(after: Int64, in zone: TimeZone) -> Int64? {
        guard let next = cron.nextOccurrence(after: after, in: zone) else { return nil }
        if let until, next > until { return nil }
        return next
    }

    /// Up to `limit` occurrences after `after`, soonest first; `fired` occurrences already sent
    /// count towards `count`.
    package func occurrences(after: Int64, in zone: TimeZone, fired: Int, limit: Int) -> [Int64] {
        var result: [Int64] = []
        var cursor = after
        let left = count.map { max(0, $0 - fired) } ?? limit
        while result.count < min(limit, left), let next = next(after: cursor, in: zone) {
            result.append(next)
            cursor = next
        }
        return result
    }
}

extension Limits {
    /// The highest `schedule.count`.
    package static let scheduleCount: Int64 = 1_000_000
}

extension PushInput {
    /// `schedule` on a push: a recurring schedule (Herald's addition).
    package struct Schedule: Sendable, Equatable, Decodable {
        package var cron: String?
        package var timeZone: String?
        package var until: Int64?
        package var count: Int64?
        /// Each device's own local time instead of `time_zone`.
        package var local: Bool?

        enum CodingKeys: String, CodingKey {
            case cron
            case timeZone = "time_zone"
            case until, count, local
        }

        package init(cron: String?, timeZone: String? = nil, until: Int64? = nil, count: Int64? = nil, local: Bool? = nil) {
            self.cron = cron
            self.timeZone = timeZone
            self.until = until
            self.count = count
            self.local = local
        }
    }

    /// Checks `schedule`: a valid cron, a known zone, an `until` still to come, a `count` from 1
    /// to `Limits.scheduleCount`; exclusive with the one-time timing fields and with
    /// `expiryTime` (one instant cannot end every occurrence's push); `local` without
    /// `time_zone`. Errors name `schedule.cron`, `schedule.time_zone`, `schedule.until`,
    /// `schedule.count`.
    ///
    /// - Parameter now: epoch milliseconds.
    func validatedRecurrence(now: Int64) throws(ValidationError) -> Recurrence? {
        guard let schedule else { return nil }
        for (name, given) in [
            ("scheduleAt", scheduleAt != nil), ("scheduleIn", scheduleIn != nil), ("scheduleLocal", scheduleLocal != nil),
        ]
        where given {
            throw ValidationError(
                code: "conflicting_fields", message: "give schedule (recurring) or \(name) (once), not both", field: "schedule")
        }
        if expiryTime != nil {
            throw ValidationError(
                code: "conflicting_fields",
                message: "a recurring schedule's pushes cannot share one expiryTime; end the schedule with schedule.until",
                field: "expiryTime")
        }
        guard let text = schedule.cron else {
            throw ValidationError(code: "missing_field", message: "schedule.cron is required", field: "schedule.cron")
        }
        try text.requireStorable(field: "schedule.cron")
        guard text.count <= 200 else {
            throw ValidationError(code: "invalid_cron", message: "a cron expression has at most 200 characters", field: "schedule.cron")
        }
        let cron = try CronExpression(text, field: "schedule.cron")
        let local = schedule.local ?? false
        if local, schedule.timeZone != nil {
            throw ValidationError(
                code: "conflicting_fields",
                message: "schedule.local sends at each device's own time zone: give it or schedule.time_zone, not both",
                field: "schedule.time_zone")
        }
        if local, cron.minutesPerHour > 1 {
            // Each local occurrence stays under way for about a day (one fan-out per zone group,
            // due as each group reaches the time): a rule firing every few minutes would keep
            // hundreds of occurrences and tens of thousands of fan-outs in flight.
            throw ValidationError(
                code: "invalid_cron",
                message:
                    "a local-time repeat fires at most once an hour (each occurrence takes a day to reach every zone): schedule.cron's minute field names one minute",
                field: "schedule.cron")
        }
        if let zone = schedule.timeZone, !PushSchedule.isTimeZone(zone) {
            throw ValidationError(message: "'\(zone)' is not an IANA time zone this server knows", field: "schedule.time_zone")
        }
        if let until = schedule.until, until <= now {
            throw ValidationError(code: "in_the_past", message: "schedule.until (epoch milliseconds) has passed", field: "schedule.until")
        }
        var count: Int?
        if let given = schedule.count {
            guard (1...Limits.scheduleCount).contains(given) else {
                throw ValidationError(
                    message: "schedule.count is a whole number from 1 to \(Limits.scheduleCount)", field: "schedule.count")
            }
            count = Int(given)
        }
        return Recurrence(cron: cron, timeZone: schedule.timeZone, until: schedule.until, count: count, local: local)
    }
}
