import HeraldCore
import HeraldStore
import Hummingbird
import NIOCore
import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONEncoder

/// `GET /v1/schedules` and `GET`/`PUT`/`DELETE /v1/schedules/:schedule_id`, with app credentials:
/// the app's pushes still to be sent. Another app's schedule, or one that has fired or been
/// cancelled, is not found.
struct SchedulesController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let scheduling: PushScheduling
    let now: @Sendable () -> Int64

    func addRoutes(to router: Router<Context>) {
        router.get("v1/schedules", use: list)
        router.get("v1/schedules/:schedule_id", use: get)
        router.put("v1/schedules/:schedule_id", use: update)
        router.delete("v1/schedules/:schedule_id", use: cancel)
    }

    /// A schedule as the API shows it: the push as stored under `push`.
    struct ScheduleView: ResponseEncodable {
        var scheduleID: String
        /// Epoch ms of the next firing.
        var scheduledFor: Int64
        var push: JSONValue

        enum CodingKeys: String, CodingKey {
            case scheduleID = "schedule_id", scheduledFor = "scheduled_for", push
        }

        init(_ schedule: StoredSchedule) throws {
            scheduleID = schedule.id
            scheduledFor = schedule.scheduledFor
            push = .object(try PushScheduling.object(schedule.request))
        }
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        // The Pivotal API answers a bare list.
        let views = try await store.schedules.list(applicationID: app.id).map(ScheduleView.init)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(views))))
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> ScheduleView {
        let app = try await auth.application(request)
        guard let schedule = try await store.schedules.find(id: try scheduleID(context), applicationID: app.id) else {
            throw APIError.notFound("schedule")
        }
        return try ScheduleView(schedule)
    }

    /// Changes the time, message or target (any top-level field given replaces the stored one;
    /// a new `scheduleAt`, `scheduleIn` or `scheduleLocal` replaces the old time whichever it
    /// was). The result is checked exactly as a new push is.
    @Sendable func update(_ request: Request, context: Context) async throws -> ScheduleView {
        var request = request
        let app = try await auth.application(request)
        let id = try scheduleID(context)
        guard let existing = try await store.schedules.find(id: id, applicationID: app.id) else {
            throw APIError.notFound("schedule")
        }
        guard let changes = try await request.decodeJSON(JSONValue.self).objectValue else {
            throw APIError.badRequest("the request body must be a JSON object", code: "invalid_json")
        }
        var members = try PushScheduling.object(existing.request)
        let timing = ["scheduleAt", "scheduleIn", "scheduleLocal"]
        if timing.contains(where: { changes[$0] != nil }) {
            for key in timing { members[key] = nil }
        }
        for (key, value) in changes { members[key] = value }
        members["validate_only"] = nil
        let merged = JSONValue.object(members).jsonText

        let time = now()
        let push = try PushScheduling.validate(merged, now: time)
        guard let plan = try await scheduling.plan(push, request: merged, applicationID: app.id, now: time, sendNowAsSlot: true) else {
            throw APIError.notFound("schedule")
        }
        switch try await store.schedules.update(
            id: id, applicationID: app.id, request: plan.request, expiresAt: push.expiresAt, localTime: plan.localTime, slots: plan.slots)
        {
        case .changed(let schedule): return try ScheduleView(schedule)
        case .notFound: throw APIError.notFound("schedule")
        }
    }

    @Sendable func cancel(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        guard try await store.schedules.cancel(id: try scheduleID(context), applicationID: app.id) else {
            throw APIError.notFound("schedule")
        }
        return Response(status: .noContent)
    }

    private func scheduleID(_ context: Context) throws -> String {
        guard let raw = context.parameters.get("schedule_id"), raw.count == 16, raw.allSatisfy(\.isHexDigit) else {
            throw APIError.notFound("schedule")
        }
        return raw.lowercased()
    }
}

extension PushScheduling {
    /// Decodes and checks a push request exactly as `POST /v1/push` does: the Pivotal rules, then
    /// what each provider would refuse (payload size, bad keys).
    static func validate(_ text: String, now: Int64) throws -> Push {
        let input: PushInput
        do {
            input = try JSONDecoder().decode(PushInput.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw APIError(Request.validationError(error))
        }
        let push = try input.validated(now: now)
        try push.checkRenderable(now: now)
        return push
    }
}
