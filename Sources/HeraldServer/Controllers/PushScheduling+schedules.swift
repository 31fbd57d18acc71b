import HeraldCore
import HeraldStore

import struct Foundation.UUID

/// An application's scheduled pushes: the operations `/v1/schedules` and the dashboard's
/// Schedules page share (one path, one set of rules).
extension PushScheduling {
    /// The app's pushes still to be sent, soonest first.
    func schedules(applicationID: UUID) async throws -> [StoredSchedule] {
        try await store.schedules.list(applicationID: applicationID)
    }

    /// One of the app's pending schedules; not found when it is another app's, has fired or was cancelled.
    func schedule(id: String, applicationID: UUID) async throws -> StoredSchedule {
        guard let schedule = try await store.schedules.find(id: id, applicationID: applicationID) else {
            throw APIError.notFound("schedule")
        }
        return schedule
    }

    /// How many of a recurring schedule's past occurrences are shown, and of its next ones.
    static var pastShown: Int { 20 }
    static var nextShown: Int { 5 }

    /// A recurring schedule's next occurrences (each its instant, and for a local-time rule its
    /// wall-clock time), as `GET /v1/schedules/:id` and the
    /// dashboard show them: from its next firing, or while paused from `now` (where a resume
    /// would start).
    static func nextOccurrences(_ recurrence: StoredRecurrence, next: Int64, now: Int64) -> [StoredRecurrence.Occurrence] {
        recurrence.upcoming(after: recurrence.paused ? now : next - 1, next: recurrence.paused ? nil : next, limit: nextShown)
    }

    /// A recurring schedule's latest past occurrences (fired with their receipts, or skipped),
    /// latest first; nil for a one-time schedule.
    func pastOccurrences(of schedule: StoredSchedule) async throws -> [PastOccurrence]? {
        guard schedule.recurrence != nil else { return nil }
        return try await store.schedules.pastOccurrences(scheduleID: schedule.id, limit: Self.pastShown)
    }

    /// Changes the time, message or target: any top-level member of `changes` replaces the
    /// stored one, and a new `scheduleAt`, `scheduleIn` or `scheduleLocal` replaces the old time
    /// whichever it was. The result is checked exactly as a new push is.
    func change(id: String, applicationID: UUID, _ changes: [String: JSONValue], now: Int64) async throws -> StoredSchedule {
        let existing = try await schedule(id: id, applicationID: applicationID)
        var members = try existing.requestMembers()
        let timing = ["scheduleAt", "scheduleIn", "scheduleLocal", "schedule"]
        if timing.contains(where: { changes[$0] != nil }) {
            for key in timing { members[key] = nil }
        }
        for (key, value) in changes { members[key] = value }
        members["validate_only"] = nil

        // A 409, not a 400: the change is well formed, and refused for the kind of schedule
        // stored (a one-time schedule may take `schedule` as a new push would). Decided before
        // the merged push is checked, whose faults would otherwise come from mixing the kinds
        // (a one-time schedule's `expiryTime` with a new `schedule`).
        let recurring = members["schedule"].map { $0 != .null } ?? false
        guard recurring == (existing.recurrence != nil) else {
            throw APIError(
                .conflict, code: "schedule_kind",
                message: existing.recurrence != nil
                    ? "a recurring schedule stays recurring: change its schedule, or cancel it and send a new push"
                    : "a one-time schedule cannot become recurring: cancel it and send a new push with schedule",
                field: "schedule")
        }
        let push = try Self.validate(members, now: now)
        if existing.recurrence != nil {
            return try await changeRecurring(id: id, applicationID: applicationID, push, members: members, now: now)
        }
        guard let plan = try await plan(push, request: members, applicationID: applicationID, now: now, sendNowAsSlot: true) else {
            throw APIError.notFound("schedule")
        }
        switch try await store.schedules.update(
            id: id, applicationID: applicationID, AcceptedPush(push, request: plan.request), localTime: plan.localTime, slots: plan.slots)
        {
        case .changed(let schedule): return schedule
        case .notFound, .notRecurring: throw APIError.notFound("schedule")
        }
    }

    /// A recurring schedule's change: the new rule runs from its first occurrence after now.
    private func changeRecurring(
        id: String, applicationID: UUID, _ push: Push, members: [String: JSONValue], now: Int64
    ) async throws -> StoredSchedule {
        guard let plan = try await plan(push, request: members, applicationID: applicationID, now: now, sendNowAsSlot: true),
            let recurrence = plan.recurrence
        else {
            throw APIError.notFound("schedule")
        }
        switch try await store.schedules.updateRecurring(
            id: id, applicationID: applicationID, AcceptedPush(push, request: plan.request), recurrence: recurrence)
        {
        case .changed(let schedule): return schedule
        case .notFound, .notRecurring: throw APIError.notFound("schedule")
        }
    }

    /// Pauses a recurring schedule; 409 for a one-time one.
    func pause(id: String, applicationID: UUID) async throws -> StoredSchedule {
        try Self.answer(try await store.schedules.pause(id: id, applicationID: applicationID), "paused")
    }

    /// Resumes a paused recurring schedule from its next occurrence after now; 409 for a
    /// one-time one.
    func resume(id: String, applicationID: UUID) async throws -> StoredSchedule {
        try Self.answer(try await store.schedules.resume(id: id, applicationID: applicationID), "resumed")
    }

    private static func answer(_ change: ScheduleChange, _ verb: String) throws -> StoredSchedule {
        switch change {
        case .changed(let schedule): return schedule
        case .notFound: throw APIError.notFound("schedule")
        case .notRecurring: throw APIError.conflict("only a recurring schedule can be \(verb)")
        }
    }

    /// Cancels a pending schedule; not found when there is none to cancel.
    func cancel(id: String, applicationID: UUID) async throws {
        guard try await store.schedules.cancel(id: id, applicationID: applicationID) else {
            throw APIError.notFound("schedule")
        }
    }

    /// A `schedule_id` as given in a path: 16 hex digits; anything else cannot exist.
    static func scheduleID(_ raw: String?) throws -> String {
        guard let raw, raw.count == 16, raw.allSatisfy(\.isHexDigit) else { throw APIError.notFound("schedule") }
        return raw.lowercased()
    }
}
