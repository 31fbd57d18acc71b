import HeraldCore

import struct Foundation.UUID

/// A scheduled push as stored: the push as accepted and when it goes out.
package struct StoredSchedule: Sendable, Equatable {
    /// The `schedule_id`: 16 hex digits.
    package var id: String
    package var applicationID: UUID
    /// The push as stored: an `AcceptedPush` (with the request, `scheduleIn` turned into
    /// `scheduleAt`), or an older Herald's request text; read the request with `requestMembers()`.
    package var request: String
    package var expiresAt: Int64?
    /// `scheduleLocal`, for a local-time schedule.
    package var localTime: String?
    /// The earliest slot still to fire (epoch ms).
    package var scheduledFor: Int64
    package var createdAt: Int64
    package var updatedAt: Int64
    /// A recurring schedule's rule and progress; nil for a one-time schedule. For a recurring
    /// one, `scheduledFor` is the next occurrence (while paused: the one the pause held back).
    package var recurrence: StoredRecurrence? = nil

    /// The request as the API shows it, without checking it again.
    package func requestMembers() throws(StoredPushError) -> [String: JSONValue] {
        try AcceptedPush.request(stored: request) ?? [:]
    }
}

/// One slot of a schedule that fired: the push it became.
package struct FiredSlot: Sendable, Equatable {
    package var slotID: Int64
    package var scheduleID: String
    package var pushID: UUID
    package var dueAt: Int64
    package var firedAt: Int64
}

/// What happened to a change of a schedule.
package enum ScheduleChange: Sendable, Equatable {
    case changed(StoredSchedule)
    /// No such schedule for this app, or it has fired or been cancelled.
    case notFound
    /// Pausing or resuming a one-time schedule.
    case notRecurring
}

/// Scheduled pushes, and their firing into accepted pushes.
///
/// Firing is exactly once across processes: a slot is turned into a push (push row and fan-out
/// job) in the same transaction that marks it fired, and PostgreSQL's `SKIP LOCKED` lets several
/// schedulers take disjoint slots. A crash before the commit leaves the slot pending; after it,
/// the push is durable.
package struct ScheduleRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock
    /// Slots added are announced to the schedulers (`WorkKind.scheduledPushes`), pushes fired to
    /// the delivery workers.
    let work: WorkSignals

    static let scheduleColumns = """
        s.id, s.app_id, s.request, s.expires_at, s.local_time, s.created_at, s.updated_at, s.state, s.cron, s.cron_time_zone,
        s.until_at, s.max_count, s.fired_count, s.next_at, s.cron_local, s.next_local
        """

    /// What `recurrence(_:)` reads of a `push_schedules` row.
    static let recurrenceColumns = "cron, cron_time_zone, until_at, max_count, fired_count, state, cron_local, next_local"

    /// Stores a schedule with its slots; returns it. `local` marks the slots' zone lists as
    /// meaningful (a local-time schedule); otherwise there is one slot, for every device.
    /// - Parameter given: the `schedule_id` to keep (16 lower-case hex digits, an imported
    ///   schedule's); one already stored is a `uniqueViolation`. Nil for a new random one.
    package func create(
        applicationID: UUID, _ accepted: AcceptedPush, localTime: String?, slots: [PushSchedule.Slot], id given: String? = nil
    ) async throws -> StoredSchedule {
        let request = accepted.storedText
        let expiresAt = accepted.push.expiresAt
        let time = clock.now.epochMilliseconds
        let id = given ?? Hex.encode((0..<8).map { _ in UInt8.random(in: 0...255) })
        try await database.transaction { connection in
            try await connection.query(
                """
                INSERT INTO push_schedules (id, app_id, request, expires_at, local_time, state, created_at, updated_at)
                VALUES (\(id), \(applicationID), \(request), \(expiresAt), \(localTime), 'scheduled', \(time), \(time))
                """)
            try await Self.insertSlots(connection, scheduleID: id, slots: slots, local: localTime != nil)
        }
        await work.announce(.scheduledPushes)
        return StoredSchedule(
            id: id, applicationID: applicationID, request: request, expiresAt: expiresAt, localTime: localTime,
            scheduledFor: slots.map(\.dueAt).min() ?? time, createdAt: time, updatedAt: time)
    }

    /// The app's schedules still to fire, soonest first.
    package func list(applicationID: UUID) async throws -> [StoredSchedule] {
        // A one-time schedule is listed while it has a pending slot, a recurring one (`next_at`)
        // while it is scheduled or paused.
        try await database.query(
            """
            SELECT \(unsafeRaw: Self.scheduleColumns), COALESCE(s.next_at, MIN(l.due_at)) AS scheduled_for
            FROM push_schedules s LEFT JOIN push_schedule_slots l ON l.schedule_id = s.id AND l.state = 'pending'
            WHERE s.app_id = \(applicationID) AND s.state IN ('scheduled', 'paused')
            GROUP BY \(unsafeRaw: Self.scheduleColumns)
            HAVING COALESCE(s.next_at, MIN(l.due_at)) IS NOT NULL
            ORDER BY scheduled_for, s.id
            """
        ).map(Self.schedule)
    }

    /// The schedule, if it belongs to `applicationID` and has not fired or been cancelled.
    package func find(id: String, applicationID: UUID) async throws -> StoredSchedule? {
        try await Self.find(database, id: id, applicationID: applicationID)
    }

    /// Replaces a pending schedule's push and slots, atomically; `notFound` if it is not the
    /// app's or has (even partly) fired or been cancelled meanwhile.
    package func update(
        id: String, applicationID: UUID, _ accepted: AcceptedPush, localTime: String?, slots: [PushSchedule.Slot]
    ) async throws -> ScheduleChange {
        let request = accepted.storedText
        let expiresAt = accepted.push.expiresAt
        let time = clock.now.epochMilliseconds
        let lock = database.dialect == .postgres ? " FOR UPDATE" : ""
        do {
            let change = try await change(id: id, applicationID: applicationID, lock: lock) { connection in
                try await connection.query(
                    """
                    UPDATE push_schedules SET request = \(request), expires_at = \(expiresAt), local_time = \(localTime),
                        updated_at = \(time)
                    WHERE id = \(id)
                    """)
                try await Self.insertSlots(connection, scheduleID: id, slots: slots, local: localTime != nil)
            }
            if case .changed = change { await work.announce(.scheduledPushes) }
            return change
        } catch is ScheduleFiredMeanwhile {
            return .notFound
        }
    }

    private func change(
        id: String, applicationID: UUID, lock: String, _ body: @escaping @Sendable (any SQLExecutor) async throws -> Void
    ) async throws -> ScheduleChange {
        try await database.transaction { connection in
            let owned = try await connection.query(
                """
                SELECT id FROM push_schedules
                WHERE id = \(id) AND app_id = \(applicationID) AND state = 'scheduled' AND cron IS NULL\(unsafeRaw: lock)
                """)
            guard !owned.isEmpty else { return .notFound }
            // The schedule's row is locked first (changes of one schedule take turns); a scheduler
            // firing a slot holds the slot's row: the delete waits for it, then skips it.
            try await connection.query("DELETE FROM push_schedule_slots WHERE schedule_id = \(id) AND state = 'pending'")
            let fired = try await connection.query(
                "SELECT COUNT(*) AS n FROM push_schedule_slots WHERE schedule_id = \(id) AND state = 'fired'")
            if try fired.first?.int("n") ?? 0 > 0 {
                throw ScheduleFiredMeanwhile()
            }
            try await body(connection)
            guard let schedule = try await Self.find(connection, id: id, applicationID: applicationID) else { return .notFound }
            return .changed(schedule)
        }
    }

    /// Cancels what is left of a schedule; false if there is nothing (not the app's, fired, or
    /// cancelled already).
    package func cancel(id: String, applicationID: UUID) async throws -> Bool {
        let time = clock.now.epochMilliseconds
        let lock = database.dialect == .postgres ? " FOR UPDATE" : ""
        let (cancelled, events) = try await database.transaction { connection -> (Bool, Bool) in
            let owned = try await connection.query(
                """
                SELECT id, cron, cron_local FROM push_schedules
                WHERE id = \(id) AND app_id = \(applicationID) AND state IN ('scheduled', 'paused')\(unsafeRaw: lock)
                """)
            guard let row = owned.first else { return (false, false) }
            if try row.optionalString("cron") != nil {
                // A recurring schedule: no occurrence fires after this (a firing holds the row),
                // and a local-time one's begun occurrences reach no further zone.
                try await connection.query(
                    "UPDATE push_schedules SET state = 'cancelled', next_at = NULL, updated_at = \(time) WHERE id = \(id)")
                guard try row.int("cron_local") != 0 else { return (true, false) }
                return (true, try await Self.stopBegunOccurrences(connection, scheduleID: id, time: time))
            }
            let cancelled = try await connection.query(
                "UPDATE push_schedule_slots SET state = 'cancelled' WHERE schedule_id = \(id) AND state = 'pending' RETURNING id")
            guard !cancelled.isEmpty else { return (false, false) }
            try await connection.query(
                "UPDATE push_schedules SET state = 'cancelled', updated_at = \(time) WHERE id = \(id)")
            return (true, false)
        }
        if events { await work.announce(.webhookEvents) }
        return cancelled
    }

    /// Fires up to `limit` due slots, soonest first: each becomes an accepted push (push row,
    /// its zones, fan-out job due now) in the transaction that marks it fired. Then as many due
    /// recurring occurrences (`fireDueOccurrences`), with `grace` as their grace window.
    package func fireDue(limit: Int, grace: Duration = .seconds(3600)) async throws -> [FiredSlot] {
        let slots = try await fireDueSlots(limit: limit)
        let occurrences = try await fireDueOccurrences(limit: limit, grace: grace)
        return slots + occurrences
    }

    /// The one-time (and local-time) slots of `fireDue`.
    private func fireDueSlots(limit: Int) async throws -> [FiredSlot] {
        let time = clock.now.epochMilliseconds
        let skip = database.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let fired = try await database.transaction { connection -> [FiredSlot] in
            let slots = try await connection.query(
                """
                UPDATE push_schedule_slots SET state = 'fired', fired_at = \(time)
                WHERE id IN (
                    SELECT id FROM push_schedule_slots WHERE state = 'pending' AND due_at <= \(time)
                    ORDER BY due_at, id LIMIT \(limit)\(unsafeRaw: skip))
                RETURNING id, schedule_id, due_at, time_zones
                """)
            guard !slots.isEmpty else { return [] }
            let scheduleIDs = Array(Set(try slots.map { try $0.string("schedule_id") })).sorted()
            var schedules: [String: (app: UUID, request: String, expiresAt: Int64?)] = [:]
            for row in try await connection.query(
                "SELECT id, app_id, request, expires_at FROM push_schedules WHERE id IN (\(list: scheduleIDs))")
            {
                schedules[try row.string("id")] = (try row.uuid("app_id"), try row.string("request"), try row.optionalInt("expires_at"))
            }
            var fired: [FiredSlot] = []
            for row in slots.sorted(by: { (try? $0.int("due_at")) ?? 0 < (try? $1.int("due_at")) ?? 0 }) {
                let slotID = try row.int("id")
                let scheduleID = try row.string("schedule_id")
                guard let schedule = schedules[scheduleID] else { continue }
                let pushID = UUID.timeOrdered(milliseconds: time)
                try await PushRepository.insert(
                    connection, id: pushID, applicationID: schedule.app, request: schedule.request, expiresAt: schedule.expiresAt,
                    availableAt: time, time: time)
                if let zones = try row.optionalString("time_zones") {
                    for zone in Self.zones(zones) {
                        try await connection.query("INSERT INTO push_time_zones (push_id, time_zone) VALUES (\(pushID), \(zone))")
                    }
                }
                try await connection.query("UPDATE push_schedule_slots SET push_id = \(pushID) WHERE id = \(slotID)")
                fired.append(FiredSlot(slotID: slotID, scheduleID: scheduleID, pushID: pushID, dueAt: try row.int("due_at"), firedAt: time))
            }
            // The schedule's own row is not touched: a change of it (which locks that row first,
            // then its slots) never waits on a firing that would wait on it in turn.
            return fired
        }
        if !fired.isEmpty { await work.announce(.deliveryJobs) }
        return fired
    }

    /// When the next pending slot or recurring occurrence is due (epoch ms), if any.
    package func nextDue() async throws -> Int64? {
        let slot = try await database.query("SELECT MIN(due_at) AS due FROM push_schedule_slots WHERE state = 'pending'").first?
            .optionalInt("due")
        let occurrence = try await database.query("SELECT MIN(next_at) AS due FROM push_schedules WHERE state = 'scheduled'").first?
            .optionalInt("due")
        return [slot, occurrence].compactMap { $0 }.min()
    }

    /// The fired slots of a schedule, soonest first (tests, benchmarks).
    package func firedSlots(scheduleID: String) async throws -> [FiredSlot] {
        try await database.query(
            """
            SELECT id, schedule_id, push_id, due_at, fired_at FROM push_schedule_slots
            WHERE schedule_id = \(scheduleID) AND state = 'fired' ORDER BY due_at, id
            """
        ).map { row in
            FiredSlot(
                slotID: try row.int("id"), scheduleID: try row.string("schedule_id"), pushID: try row.uuid("push_id"),
                dueAt: try row.int("due_at"), firedAt: try row.int("fired_at"))
        }
    }

    // MARK: Helpers

    static func insertSlots(_ connection: any SQLExecutor, scheduleID: String, slots: [PushSchedule.Slot], local: Bool) async throws {
        for slot in slots {
            let zones: String? = local ? slot.timeZones.joined(separator: ",") : nil
            try await connection.query(
                """
                INSERT INTO push_schedule_slots (schedule_id, due_at, time_zones, state)
                VALUES (\(scheduleID), \(slot.dueAt), \(zones), 'pending')
                """)
        }
    }

    /// A slot's zone list; `""` (devices without a zone) is kept.
    static func zones(_ list: String) -> [String] {
        list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }

    static func find(_ connection: any SQLExecutor, id: String, applicationID: UUID) async throws -> StoredSchedule? {
        try await connection.query(
            """
            SELECT \(unsafeRaw: scheduleColumns), COALESCE(s.next_at, MIN(l.due_at)) AS scheduled_for
            FROM push_schedules s LEFT JOIN push_schedule_slots l ON l.schedule_id = s.id AND l.state = 'pending'
            WHERE s.id = \(id) AND s.app_id = \(applicationID) AND s.state IN ('scheduled', 'paused')
            GROUP BY \(unsafeRaw: scheduleColumns)
            HAVING COALESCE(s.next_at, MIN(l.due_at)) IS NOT NULL
            """
        ).first.map(schedule)
    }

    /// A recurring schedule's rule and progress from its row (`recurrenceColumns`); nil for a
    /// one-time schedule.
    static func recurrence(_ row: SQLRow) throws -> StoredRecurrence? {
        guard let cron = try row.optionalString("cron") else { return nil }
        let local = try row.int("cron_local") != 0
        return StoredRecurrence(
            cron: cron, timeZone: try row.optionalString("cron_time_zone") ?? (local ? "" : "UTC"), until: try row.optionalInt("until_at"),
            count: try row.optionalInt("max_count").map(Int.init), firedCount: Int(try row.int("fired_count")),
            paused: try row.string("state") == "paused", local: local,
            nextLocalTime: try row.optionalString("next_local").flatMap(LocalDateTime.init))
    }

    static func schedule(_ row: SQLRow) throws -> StoredSchedule {
        let recurrence = try recurrence(row)
        return StoredSchedule(
            id: try row.string("id"), applicationID: try row.uuid("app_id"), request: try row.string("request"),
            expiresAt: try row.optionalInt("expires_at"), localTime: try row.optionalString("local_time"),
            scheduledFor: try row.int("scheduled_for"), createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"),
            recurrence: recurrence)
    }
}

/// A schedule fired while it was being changed: the change is rolled back (the caller answers 404).
struct ScheduleFiredMeanwhile: Error {}
