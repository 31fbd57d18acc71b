import HeraldCore

import struct Foundation.TimeZone
import struct Foundation.UUID

/// Recurring schedules in each device's own local time (`"schedule": {"cron", "local": true}`).
///
/// The row is a recurring schedule like any other; `next_at` is when the earliest zone on Earth
/// reaches the next occurrence's wall-clock time (`next_local`). Firing it, under the row's lock
/// and in one transaction as for a zoned schedule, makes the occurrence's one push (one receipt)
/// with one fan-out job per group of zones that reach the wall-clock time at the same instant
/// (the groups of a one-time `scheduleLocal` push, `PushSchedule.slots`), each due at its
/// group's instant and limited to its zones; then `next_at` moves on to the next occurrence.
/// The delivery workers take each fan-out when it is due, so each device receives the push at
/// the wall-clock time in its own zone, and the push is done when its last group is.
extension ScheduleRepository {
    /// Fires the due occurrence (beginning at `dueAt`) of the local-time schedule whose row the
    /// caller holds locked, and moves the row on to the next; the occurrence's push, unless it
    /// was skipped.
    ///
    /// Zones that reached the wall-clock time longer than `grace` (ms) ago are left out, as a
    /// zoned schedule skips an occurrence missed by more; an occurrence every zone reached that
    /// long ago is skipped and recorded, and the schedule jumps to the first occurrence some
    /// zone can still receive in time (each zone reaches a wall-clock time at most 14 h after
    /// UTC does), so an outage costs one record, not one per missed occurrence.
    static func fireLocal(
        _ connection: any SQLExecutor, scheduleID: String, applicationID: UUID, request: String, recurrence: StoredRecurrence,
        dueAt: Int64, time: Int64, grace: Int64
    ) async throws -> FiredSlot? {
        var fired: FiredSlot?
        var recurrence = recurrence
        var next: StoredRecurrence.Occurrence?
        if let local = recurrence.nextLocalTime ?? recurrence.nextOccurrence(after: dueAt - 1)?.localTime {
            let all = try await zoneGroups(connection, for: local, applicationID: applicationID)
            let groups = all.filter { $0.dueAt >= time - grace }
            // Recorded with the occurrence, so that an outage's cost shows in its history.
            let missed = all.filter { $0.dueAt < time - grace }.reduce(0) { $0 + $1.timeZones.count }
            if groups.isEmpty {
                // Every zone reached it too long ago: skip to the first occurrence that some zone
                // reaches within the window or later.
                let window = LocalDateTime(floatingMilliseconds: time - grace - 14 * 3_600_000)
                let from = window.map { $0.floatingMilliseconds > local.floatingMilliseconds ? $0 : local } ?? local
                next = recurrence.nextLocal(after: from)
                try await connection.query(
                    """
                    INSERT INTO push_schedule_slots (schedule_id, due_at, state, fired_at, skipped_until, local_time)
                    VALUES (\(scheduleID), \(dueAt), 'skipped', \(time), \(max(dueAt + 1, next?.at ?? time)), \(local.description))
                    """)
            } else {
                let pushID = UUID.timeOrdered(milliseconds: time)
                try await PushRepository.insert(
                    connection, id: pushID, applicationID: applicationID, request: request, expiresAt: nil, availableAt: time, time: time,
                    zoneGroups: groups)
                let inserted = try await connection.query(
                    """
                    INSERT INTO push_schedule_slots (schedule_id, due_at, state, push_id, fired_at, local_time, missed_time_zones)
                    VALUES (\(scheduleID), \(dueAt), 'fired', \(pushID), \(time), \(local.description), \(missed > 0 ? Int64(missed) : nil))
                    RETURNING id
                    """)
                recurrence.firedCount += 1
                fired = FiredSlot(
                    slotID: try inserted.first?.int("id") ?? 0, scheduleID: scheduleID, pushID: pushID, dueAt: dueAt, firedAt: time)
                next = recurrence.nextLocal(after: local)
            }
        }
        try await connection.query(
            """
            UPDATE push_schedules SET fired_count = \(Int64(recurrence.firedCount)), next_at = \(next?.at),
                next_local = \(next?.localTime?.description), state = \(next == nil ? "ended" : "scheduled")
            WHERE id = \(scheduleID)
            """)
        return fired
    }

    /// The groups of zones that reach `local` at the same instant, soonest first, as a one-time
    /// `scheduleLocal` push has them: every zone Foundation knows and every other name the app's
    /// devices registered with; devices without a zone ('') go with the app's default zone.
    static func zoneGroups(_ connection: any SQLExecutor, for local: LocalDateTime, applicationID: UUID) async throws -> [PushSchedule.Slot]
    {
        let settings = try await DeliverySettingsRepository.find(connection, applicationID: applicationID)
        let registered = try await DeviceRepository.timeZones(connection, applicationID: applicationID)
        return PushSchedule.slots(for: local, defaultZone: settings.defaultTimeZone, zones: TimeZone.knownTimeZoneIdentifiers + registered)
    }

    /// The slots of a one-time `scheduleLocal` push for `local` (`zoneGroups`), as the app's
    /// devices and default zone are now.
    package func zoneGroups(for local: LocalDateTime, applicationID: UUID) async throws -> [PushSchedule.Slot] {
        try await Self.zoneGroups(database, for: local, applicationID: applicationID)
    }

    /// Ends what a local-time schedule's begun occurrences still have to send (cancel, pause):
    /// their fan-outs for zones that have not reached the wall-clock time yet are closed unrun,
    /// and a push left with no open job is done. A fan-out already due is left to its worker.
    /// Returns whether a closed push queued its `push.done` event.
    static func stopBegunOccurrences(_ connection: any SQLExecutor, scheduleID: String, time: Int64) async throws -> Bool {
        let stopped = try await connection.query(
            """
            UPDATE push_jobs SET state = 'done'
            WHERE kind = 'fanout' AND state = 'ready' AND available_at > \(time) AND push_id IN (
                SELECT push_id FROM push_schedule_slots WHERE schedule_id = \(scheduleID) AND state = 'fired' AND push_id IS NOT NULL)
            RETURNING push_id
            """)
        var events = false
        for pushID in Set(try stopped.map { try $0.uuid("push_id") }).sorted(by: { $0.uuidString < $1.uuidString }) {
            let queued = try await PushRepository.closeIfFinished(connection, pushID: pushID, time: time)
            events = events || queued
        }
        return events
    }
}
