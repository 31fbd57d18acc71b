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
    let auth: Authenticator
    let scheduling: PushScheduling
    let clock: EpochClock

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
            push = .object(try schedule.requestMembers())
        }
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        // The Pivotal API answers a bare list.
        let views = try await scheduling.schedules(applicationID: app.id).map(ScheduleView.init)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(views))))
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> ScheduleView {
        let app = try await auth.application(request)
        return try ScheduleView(try await scheduling.schedule(id: try scheduleID(context), applicationID: app.id))
    }

    /// Changes the time, message or target (`PushScheduling.change`).
    @Sendable func update(_ request: Request, context: Context) async throws -> ScheduleView {
        var request = request
        let app = try await auth.application(request)
        let id = try scheduleID(context)
        guard let changes = try await request.decodeJSON(JSONValue.self).objectValue else {
            throw APIError.badRequest("the request body must be a JSON object", code: "invalid_json")
        }
        return try ScheduleView(try await scheduling.change(id: id, applicationID: app.id, changes, now: clock.now.epochMilliseconds))
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
