import HeraldCore
import HeraldStore

import struct Foundation.Data
import class Foundation.JSONDecoder
import struct Foundation.TimeZone
import struct Foundation.UUID

/// Turns validated pushes for later into schedules: when they fire, the request to store, and
/// for `scheduleLocal` one slot per group of time zones.
struct PushScheduling: Sendable {
    let store: Store
    let configuration: SchedulingConfiguration

    /// What a schedule is stored as.
    struct Plan: Sendable {
        /// The request, with `scheduleIn` turned into `scheduleAt`.
        var request: [String: JSONValue]
        var localTime: String?
        var slots: [PushSchedule.Slot]
        /// A recurring schedule's rule (zone resolved) and first occurrence; `slots` is empty.
        var recurrence: StoredRecurrence? = nil
        var nextAt: Int64? = nil
    }

    /// Stores `push` as a schedule when it is for later; nil when it is to be sent now. `request`
    /// (the body as given) is read only for a schedule, which keeps it to show and to change;
    /// `id` is a `schedule_id` to keep (an imported one), nil for a new one.
    func schedule(_ push: Push, request: String, applicationID: UUID, now: Int64, id: String? = nil) async throws -> StoredSchedule? {
        if case .now = PushSchedule.of(push, now: now, sendImmediatelyWithin: configuration.sendImmediatelyWithin) { return nil }
        guard
            let plan = try await plan(push, request: try Self.object(request), applicationID: applicationID, now: now, sendNowAsSlot: false)
        else {
            return nil
        }
        if let recurrence = plan.recurrence, let nextAt = plan.nextAt {
            return try await store.schedules.createRecurring(
                applicationID: applicationID, AcceptedPush(push, request: plan.request), recurrence: recurrence, nextAt: nextAt, id: id)
        }
        return try await store.schedules.create(
            applicationID: applicationID, AcceptedPush(push, request: plan.request), localTime: plan.localTime, slots: plan.slots, id: id)
    }

    /// The plan for `push`, whose request members are `request`; nil if it is to be sent now,
    /// unless `sendNowAsSlot` (a changed schedule whose time has come fires at once, keeping its
    /// `schedule_id`).
    func plan(
        _ push: Push, request: [String: JSONValue], applicationID: UUID, now: Int64, sendNowAsSlot: Bool
    ) async throws -> Plan? {
        var members = request
        members["scheduleIn"] = nil
        switch PushSchedule.of(push, now: now, sendImmediatelyWithin: configuration.sendImmediatelyWithin) {
        case .now:
            guard sendNowAsSlot else { return nil }
            members["scheduleAt"] = .int(now)
            return Plan(request: members, localTime: nil, slots: [PushSchedule.Slot(dueAt: now, timeZones: [])])
        case .at(let at):
            members["scheduleAt"] = .int(at)
            return Plan(request: members, localTime: nil, slots: [PushSchedule.Slot(dueAt: at, timeZones: [])])
        case .local(let local):
            // Every zone Foundation lists, and any other name the app's devices registered with.
            let slots = try await store.schedules.zoneGroups(for: local, applicationID: applicationID)
            return Plan(request: members, localTime: local.description, slots: slots)
        case .recurring(let recurrence):
            return try await recurringPlan(recurrence, request: members, applicationID: applicationID, now: now)
        }
    }

    /// A recurring schedule's plan: its zone (the app's default when the push names none, then
    /// shown in the stored request; none for `local`) and its first occurrence after `now` (a
    /// local one's: when the earliest zone reaches it); none before `until` is a 409 naming
    /// `schedule.until`.
    private func recurringPlan(
        _ recurrence: Recurrence, request: [String: JSONValue], applicationID: UUID, now: Int64
    ) async throws -> Plan {
        var members = request
        var zone = recurrence.timeZone
        if zone == nil && !recurrence.local {
            zone = try await store.deliverySettings.find(applicationID: applicationID).defaultTimeZone
            if case .object(var schedule) = members["schedule"] {
                schedule["time_zone"] = .string(zone ?? "UTC")
                members["schedule"] = .object(schedule)
            }
        }
        var stored = StoredRecurrence(recurrence, zone: zone ?? "UTC")
        guard let next = stored.nextOccurrence(after: now) else {
            throw ValidationError(
                code: "no_occurrence", message: "no occurrence of schedule.cron comes before schedule.until", field: "schedule.until")
        }
        stored.nextLocalTime = next.localTime
        return Plan(request: members, localTime: nil, slots: [], recurrence: stored, nextAt: next.at)
    }

    /// The members of a JSON object request.
    static func object(_ text: String) throws -> [String: JSONValue] {
        guard let object = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)).objectValue else {
            throw APIError.badRequest("the request body must be a JSON object", code: "invalid_json")
        }
        return object
    }
}
