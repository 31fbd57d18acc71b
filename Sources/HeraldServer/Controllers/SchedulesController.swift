import HeraldCore
import HeraldStore
import Hummingbird
import NIOCore

import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONEncoder

/// `GET /v1/schedules`, `GET`/`PUT`/`DELETE /v1/schedules/:schedule_id` and, for a recurring
/// schedule, `POST /v1/schedules/:schedule_id/pause` and `…/resume`, with app credentials: the
/// app's pushes still to be sent. Another app's schedule, or one that has fired, ended or been
/// cancelled, is not found.
struct SchedulesController<Context: RequestContext>: Sendable {
    let auth: Authenticator
    let scheduling: PushScheduling
    let clock: EpochClock

    func addRoutes(to router: Router<Context>) {
        router.get("v1/schedules", use: list)
        router.get("v1/schedules/:schedule_id", use: get)
        router.put("v1/schedules/:schedule_id", use: update)
        router.delete("v1/schedules/:schedule_id", use: cancel)
        router.post("v1/schedules/:schedule_id/pause", use: pause)
        router.post("v1/schedules/:schedule_id/resume", use: resume)
    }

    /// A schedule as the API shows it: the push as stored under `push`; a recurring one's rule,
    /// progress and next occurrences under `recurrence`, and (one schedule's `GET`) its past
    /// occurrences, latest first.
    struct ScheduleView: ResponseEncodable {
        var scheduleID: String
        /// Epoch ms of the next firing.
        var scheduledFor: Int64
        var push: JSONValue
        var recurrence: RecurrenceView?
        var occurrences: [OccurrenceView]?

        enum CodingKeys: String, CodingKey {
            case scheduleID = "schedule_id"
            case scheduledFor = "scheduled_for"
            case push, recurrence, occurrences
        }

        /// - Parameter now: epoch ms, from which a paused schedule's next occurrences are counted.
        init(_ schedule: StoredSchedule, now: Int64, past: [PastOccurrence]? = nil) throws {
            scheduleID = schedule.id
            scheduledFor = schedule.scheduledFor
            push = .object(try schedule.requestMembers())
            recurrence = schedule.recurrence.map { RecurrenceView($0, next: schedule.scheduledFor, now: now) }
            occurrences = past.map { $0.map(OccurrenceView.init) }
        }
    }

    struct RecurrenceView: Encodable {
        var cron: String
        /// None for a local-time rule.
        var timeZone: String?
        /// Each device's own local time.
        var local: Bool
        var until: Int64?
        var count: Int?
        /// Occurrences fired so far.
        var fired: Int
        var paused: Bool
        /// The next occurrences (epoch ms): from `scheduled_for`, or while paused from now (where
        /// a resume would start).
        var nextOccurrences: [Int64]
        /// A local-time rule: the wall-clock times of `next_occurrences` (each begins, in the
        /// earliest zone, at its instant there).
        var nextLocalTimes: [String]?

        enum CodingKeys: String, CodingKey {
            case cron
            case timeZone = "time_zone"
            case local, until, count, fired, paused
            case nextOccurrences = "next_occurrences"
            case nextLocalTimes = "next_local_times"
        }

        init(_ recurrence: StoredRecurrence, next: Int64, now: Int64) {
            cron = recurrence.cron
            timeZone = recurrence.local ? nil : recurrence.timeZone
            local = recurrence.local
            until = recurrence.until
            count = recurrence.count
            fired = recurrence.firedCount
            paused = recurrence.paused
            let upcoming = PushScheduling.nextOccurrences(recurrence, next: next, now: now)
            nextOccurrences = upcoming.map(\.at)
            nextLocalTimes = recurrence.local ? upcoming.compactMap { $0.localTime?.description } : nil
        }
    }

    /// A past occurrence: fired, with its receipt and counters, or skipped (missed beyond the
    /// grace window), with every occurrence up to `skipped_until`.
    struct OccurrenceView: Encodable {
        var dueAt: Int64
        /// A local-time occurrence's wall-clock time (`due_at`: when the earliest zone reached it).
        var localTime: String?
        var state: String
        var firedAt: Int64?
        var receiptID: String?
        var status: String?
        var targeted: Int?
        var delivered: Int?
        var failed: Int?
        var skippedAt: Int64?
        var skippedUntil: Int64?
        var missedTimeZones: Int?

        enum CodingKeys: String, CodingKey {
            case dueAt = "due_at"
            case localTime = "local_time"
            case state
            case firedAt = "fired_at"
            case receiptID = "receipt_id"
            case status, targeted, delivered, failed
            case skippedAt = "skipped_at"
            case skippedUntil = "skipped_until"
            case missedTimeZones = "missed_time_zones"
        }

        init(_ occurrence: PastOccurrence) {
            dueAt = occurrence.dueAt
            localTime = occurrence.localTime
            state = occurrence.state.rawValue
            switch occurrence.state {
            case .fired:
                firedAt = occurrence.recordedAt
                receiptID = occurrence.pushID
                status = occurrence.status
                targeted = occurrence.targeted
                delivered = occurrence.delivered
                failed = occurrence.failed
                missedTimeZones = occurrence.missedTimeZones
            case .skipped:
                skippedAt = occurrence.recordedAt
                skippedUntil = occurrence.skippedUntil
            }
        }
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        // The Pivotal API answers a bare list.
        let now = clock.now.epochMilliseconds
        let views = try await scheduling.schedules(applicationID: app.id).map { try ScheduleView($0, now: now) }
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(views))))
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> ScheduleView {
        let app = try await auth.application(request)
        let schedule = try await scheduling.schedule(id: try scheduleID(context), applicationID: app.id)
        let past = try await scheduling.pastOccurrences(of: schedule)
        return try ScheduleView(schedule, now: clock.now.epochMilliseconds, past: past)
    }

    /// Pauses a recurring schedule (409 for a one-time one).
    @Sendable func pause(_ request: Request, context: Context) async throws -> ScheduleView {
        let app = try await auth.application(request)
        return try ScheduleView(
            try await scheduling.pause(id: try scheduleID(context), applicationID: app.id), now: clock.now.epochMilliseconds)
    }

    /// Resumes a paused recurring schedule from its next occurrence after now.
    @Sendable func resume(_ request: Request, context: Context) async throws -> ScheduleView {
        let app = try await auth.application(request)
        return try ScheduleView(
            try await scheduling.resume(id: try scheduleID(context), applicationID: app.id), now: clock.now.epochMilliseconds)
    }

    /// Changes the time, message or target (`PushScheduling.change`).
    @Sendable func update(_ request: Request, context: Context) async throws -> ScheduleView {
        var request = request
        let app = try await auth.application(request)
        let id = try scheduleID(context)
        guard let changes = try await request.decodeJSON(JSONValue.self).objectValue else {
            throw APIError.badRequest("the request body must be a JSON object", code: "invalid_json")
        }
        let now = clock.now.epochMilliseconds
        return try ScheduleView(try await scheduling.change(id: id, applicationID: app.id, changes, now: now), now: now)
    }

    @Sendable func cancel(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        try await scheduling.cancel(id: try scheduleID(context), applicationID: app.id)
        return Response(status: .noContent)
    }

    private func scheduleID(_ context: Context) throws -> String {
        try PushScheduling.scheduleID(context.parameters.get("schedule_id"))
    }
}

extension PushScheduling {
    /// Decodes and checks a push request exactly as `POST /v1/push` does
    /// (`AcceptedPush.check`): the Pivotal rules, then what each provider would refuse.
    static func validate(_ members: [String: JSONValue], now: Int64) throws -> Push {
        let input: PushInput
        do {
            input = try JSONDecoder().decode(PushInput.self, from: Data(JSONValue.object(members).jsonText.utf8))
        } catch let error as DecodingError {
            throw APIError(Request.validationError(error))
        }
        return try AcceptedPush.check(input, now: now)
    }
}
