import HeraldCore

import struct Foundation.UUID

/// Recurring schedules: one `push_schedules` row with its rule and `next_at`, the occurrence
/// still to fire.
///
/// Exactly once: a scheduler takes a due row under its lock (`FOR UPDATE SKIP LOCKED` on
/// PostgreSQL, the one writer on SQLite), fires the occurrence (push row and fan-out job, and an
/// occurrence row linking it to the schedule) and moves `next_at` past it in the same
/// transaction. Another scheduler skips the locked row, and after the commit finds `next_at` in
/// the future; a crash before the commit leaves everything as it was. `next_at` moves from the
/// occurrence, never from the time of firing, so a late scheduler loses no occurrence. Changes
/// (edit, pause, resume, cancel) lock the same row first, so they wait for a firing in progress.
extension ScheduleRepository {
    /// Stores a recurring schedule whose first occurrence is `nextAt` (a local-time one's:
    /// begins then, at `recurrence.nextLocalTime`).
    /// - Parameter given: the `schedule_id` to keep, as `create` takes it.
    package func createRecurring(
        applicationID: UUID, _ accepted: AcceptedPush, recurrence: StoredRecurrence, nextAt: Int64, id given: String? = nil
    ) async throws -> StoredSchedule {
        let request = accepted.storedText
        let time = clock.now.epochMilliseconds
        let id = given ?? Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) })
        try await database.query(
            """
            INSERT INTO push_schedules (
                id, app_id, request, expires_at, local_time, state, created_at, updated_at,
                cron, cron_time_zone, until_at, max_count, fired_count, next_at, cron_local, next_local)
            VALUES (
                \(id), \(applicationID), \(request), NULL, NULL, 'scheduled', \(time), \(time),
                \(recurrence.cron), \(recurrence.local ? nil : recurrence.timeZone), \(recurrence.until), \(recurrence.count.map(Int64.init)), 0,
                \(nextAt), \(recurrence.local ? 1 : 0), \(recurrence.nextLocalTime?.description))
            """)
        await work.announce(.scheduledPushes)
        return StoredSchedule(
            id: id, applicationID: applicationID, request: request, expiresAt: nil, localTime: nil, scheduledFor: nextAt,
            createdAt: time, updatedAt: time, recurrence: recurrence)
    }

    /// Replaces a recurring schedule's push and rule; its next occurrence is the new rule's first
    /// after now. Paused stays paused; occurrences already fired stay and count towards `count`.
    /// A `count` already reached, or a rule with no occurrence left, is a 400 naming
    /// `schedule.count` or `schedule.until`.
    package func updateRecurring(
        id: String, applicationID: UUID, _ accepted: AcceptedPush, recurrence: StoredRecurrence
    ) async throws -> ScheduleChange {
        let request = accepted.storedText
        let time = clock.now.epochMilliseconds
        let change = try await locked(id: id, applicationID: applicationID) { connection, current in
            var rule = recurrence
            rule.firedCount = current.firedCount
            rule.paused = current.paused
            if let count = rule.count, count <= rule.firedCount {
                throw ValidationError(
                    code: "no_occurrence", message: "the schedule has already sent \(rule.firedCount) pushes; schedule.count must be more",
                    field: "schedule.count")
            }
            guard let next = rule.nextOccurrence(after: time) else {
                throw ValidationError(
                    code: "no_occurrence", message: "no occurrence of schedule.cron comes before schedule.until", field: "schedule.until")
            }
            // A local-time occurrence already begun keeps going to the zones it has not reached.
            try await connection.query(
                """
                UPDATE push_schedules SET request = \(request), cron = \(rule.cron), cron_time_zone = \(rule.local ? nil : rule.timeZone),
                    until_at = \(rule.until), max_count = \(rule.count.map(Int64.init)), next_at = \(next.at),
                    cron_local = \(rule.local ? 1 : 0), next_local = \(next.localTime?.description), updated_at = \(time)
                WHERE id = \(id)
                """)
        }
        if case .changed = change { await work.announce(.scheduledPushes) }
        return change
    }

    /// Pauses a recurring schedule: nothing fires until it is resumed (a local-time one's begun
    /// occurrences reach no further zone). Pausing a paused one changes nothing.
    package func pause(id: String, applicationID: UUID) async throws -> ScheduleChange {
        let time = clock.now.epochMilliseconds
        let change = try await locked(id: id, applicationID: applicationID) { connection, current in
            guard !current.paused else { return }
            try await connection.query("UPDATE push_schedules SET state = 'paused', updated_at = \(time) WHERE id = \(id)")
            if current.local {
                _ = try await Self.stopBegunOccurrences(connection, scheduleID: id, time: time)
            }
        }
        // A push the pause closed may have queued its `push.done`.
        if case .changed(let schedule) = change, schedule.recurrence?.local == true { await work.announce(.webhookEvents) }
        return change
    }

    /// Resumes a paused recurring schedule from its first occurrence after now: the occurrences
    /// that came while it was paused are not sent. Resuming a running one changes nothing; one
    /// with no occurrence left ends (`notFound`).
    package func resume(id: String, applicationID: UUID) async throws -> ScheduleChange {
        let time = clock.now.epochMilliseconds
        let change = try await locked(id: id, applicationID: applicationID) { connection, current in
            guard current.paused else { return }
            if let next = current.nextOccurrence(after: time) {
                try await connection.query(
                    """
                    UPDATE push_schedules SET state = 'scheduled', next_at = \(next.at), next_local = \(next.localTime?.description),
                        updated_at = \(time)
                    WHERE id = \(id)
                    """)
            } else {
                try await connection.query(
                    "UPDATE push_schedules SET state = 'ended', next_at = NULL, updated_at = \(time) WHERE id = \(id)")
            }
        }
        if case .changed = change { await work.announce(.scheduledPushes) }
        return change
    }

    /// Runs `body` on the app's scheduled or paused recurring schedule `id`, its row locked, and
    /// answers the schedule as it then is.
    private func locked(
        id: String, applicationID: UUID,
        _ body: @escaping @Sendable (any SQLExecutor, StoredRecurrence) async throws -> Void
    ) async throws -> ScheduleChange {
        let lock = database.dialect == .postgres ? " FOR UPDATE" : ""
        return try await database.transaction { connection in
            let rows = try await connection.query(
                """
                SELECT \(unsafeRaw: Self.recurrenceColumns) FROM push_schedules
                WHERE id = \(id) AND app_id = \(applicationID) AND state IN ('scheduled', 'paused')\(unsafeRaw: lock)
                """)
            guard let row = rows.first else { return .notFound }
            guard let current = try Self.recurrence(row) else { return .notRecurring }
            try await body(connection, current)
            guard let schedule = try await Self.find(connection, id: id, applicationID: applicationID) else { return .notFound }
            return .changed(schedule)
        }
    }

    // MARK: Firing

    /// Fires up to `limit` due recurring schedules, soonest first, each in its row's lock.
    ///
    /// A schedule whose `next_at` is due fires its latest occurrence not after now, if that is
    /// within `grace` of now; the earlier ones it missed (a scheduler that was down or far
    /// behind) are skipped, recorded as one skipped row, so that a restart never sends a burst of
    /// stale pushes. `next_at` then moves to the first occurrence after now; `until` and `count`
    /// end the schedule (state `ended`).
    func fireDueOccurrences(limit: Int, grace: Duration) async throws -> [FiredSlot] {
        let time = clock.now.epochMilliseconds
        let graceMilliseconds = grace.milliseconds
        let skip = database.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let fired = try await database.transaction { connection -> [FiredSlot] in
            let rows = try await connection.query(
                """
                SELECT id, app_id, request, next_at, \(unsafeRaw: Self.recurrenceColumns) FROM push_schedules
                WHERE state = 'scheduled' AND next_at <= \(time)
                ORDER BY next_at, id LIMIT \(limit)\(unsafeRaw: skip)
                """)
            var fired: [FiredSlot] = []
            for row in rows {
                let scheduleID = try row.string("id")
                guard let recurrence = try Self.recurrence(row) else { continue }
                if recurrence.local {
                    let occurrence = try await Self.fireLocal(
                        connection, scheduleID: scheduleID, applicationID: try row.uuid("app_id"), request: try row.string("request"),
                        recurrence: recurrence, dueAt: try row.int("next_at"), time: time, grace: graceMilliseconds)
                    if let occurrence { fired.append(occurrence) }
                    continue
                }
                let plan = Self.catchUp(from: try row.int("next_at"), now: time, grace: graceMilliseconds, recurrence.next(after:))
                var firedCount = recurrence.firedCount
                if let due = plan.fire {
                    let pushID = UUID.timeOrdered(milliseconds: time)
                    try await PushRepository.insert(
                        connection, id: pushID, applicationID: try row.uuid("app_id"), request: try row.string("request"), expiresAt: nil,
                        availableAt: time, time: time)
                    let inserted = try await connection.query(
                        """
                        INSERT INTO push_schedule_slots (schedule_id, due_at, state, push_id, fired_at)
                        VALUES (\(scheduleID), \(due), 'fired', \(pushID), \(time)) RETURNING id
                        """)
                    firedCount += 1
                    fired.append(
                        FiredSlot(
                            slotID: try inserted.first?.int("id") ?? 0, scheduleID: scheduleID, pushID: pushID, dueAt: due, firedAt: time))
                }
                if let skipped = plan.skipped {
                    try await connection.query(
                        """
                        INSERT INTO push_schedule_slots (schedule_id, due_at, state, fired_at, skipped_until)
                        VALUES (\(scheduleID), \(skipped.lowerBound), 'skipped', \(time), \(skipped.upperBound))
                        """)
                }
                var next = plan.next
                if let count = recurrence.count, firedCount >= count { next = nil }
                try await connection.query(
                    """
                    UPDATE push_schedules SET fired_count = \(Int64(firedCount)), next_at = \(next),
                        state = \(next == nil ? "ended" : "scheduled")
                    WHERE id = \(scheduleID)
                    """)
            }
            return fired
        }
        if !fired.isEmpty { await work.announce(.deliveryJobs) }
        return fired
    }

    /// What a due schedule does now.
    struct CatchUp: Equatable {
        /// The occurrence to fire.
        var fire: Int64?
        /// The occurrences skipped: from the first up to (not including) the bound.
        var skipped: Range<Int64>?
        /// The first occurrence after now; nil when none is left.
        var next: Int64?
    }

    /// The occurrences from `first` (due) to now: the latest fires if within `grace` (ms) of
    /// `now`, the others are skipped. Occurrences older than the window are jumped over with one
    /// `next` call from the window's start, so a long outage costs no walk through every missed
    /// occurrence; inside the window the walk is at most one step per occurrence in it.
    static func catchUp(from first: Int64, now: Int64, grace: Int64, _ next: (Int64) -> Int64?) -> CatchUp {
        var skippedFrom: Int64?
        var slot: Int64? = first
        if now - first > grace {
            skippedFrom = first
            slot = next(now - grace - 1)
        }
        while let current = slot, current <= now {
            let following = next(current)
            if let following, following <= now {
                skippedFrom = skippedFrom ?? current
                slot = following
                continue
            }
            let skipped = skippedFrom.map { $0..<current }
            return CatchUp(fire: current, skipped: skipped, next: following)
        }
        let skipped = skippedFrom.map { $0..<max($0 + 1, slot ?? now) }
        return CatchUp(fire: nil, skipped: skipped, next: slot)
    }

    // MARK: History

    /// The schedule's past occurrences, latest first, at most `limit`: fired ones with their
    /// receipt's counters, and skipped ones.
    package func pastOccurrences(scheduleID: String, limit: Int) async throws -> [PastOccurrence] {
        try await database.query(
            """
            SELECT l.due_at, l.local_time, l.state, l.fired_at, l.push_id, l.skipped_until, l.missed_time_zones, p.status, p.targeted, p.delivered, p.failed
            FROM push_schedule_slots l LEFT JOIN pushes p ON p.id = l.push_id
            WHERE l.schedule_id = \(scheduleID) AND l.state IN ('fired', 'skipped')
            ORDER BY l.due_at DESC, l.id DESC LIMIT \(limit)
            """
        ).map { row in
            PastOccurrence(
                dueAt: try row.int("due_at"), localTime: try row.optionalString("local_time"),
                state: PastOccurrence.State(rawValue: try row.string("state")) ?? .fired,
                recordedAt: try row.optionalInt("fired_at") ?? 0, pushID: try row.optionalString("push_id"),
                skippedUntil: try row.optionalInt("skipped_until"), missedTimeZones: try row.optionalInt("missed_time_zones").map(Int.init),
                status: try row.optionalString("status"),
                targeted: try row.optionalInt("targeted").map(Int.init), delivered: try row.optionalInt("delivered").map(Int.init),
                failed: try row.optionalInt("failed").map(Int.init))
        }
    }
}
