import HeraldCore
import HeraldStore
import Hummingbird

/// `PUT /admin/v1/apps/:app/schedules/:schedule_id`: a push for later stored under the
/// `schedule_id` it had on the server it comes from (`herald import pivotal`), so that a backend
/// holding that id can still `GET`/`PUT`/`DELETE /v1/schedules/:schedule_id`. The push is checked
/// exactly as `POST /v1/push` checks it; a bearer admin token.
struct ScheduleImportController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let clock: EpochClock
    let scheduling: PushScheduling

    func addRoutes(to router: Router<Context>) {
        router.put("admin/v1/apps/:app/schedules/:schedule_id", use: create)
    }

    struct Created: ResponseEncodable {
        var scheduleID: String

        enum CodingKeys: String, CodingKey {
            case scheduleID = "schedule_id"
        }
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<Created> {
        var request = request
        let app = try await AdminScope.application(request, context, auth: auth, store: store)
        // Herald's own ids are 16 hex digits, as Pivotal's are: any other cannot be kept.
        guard let raw = context.parameters.get("schedule_id"), raw.count == 16, raw.allSatisfy(\.isHexDigit) else {
            throw APIError.badRequest("a schedule_id is 16 hexadecimal digits", field: "schedule_id")
        }
        let id = raw.lowercased()
        let input = try await request.decodeJSON(PushInput.self)
        let body = try await request.body.collect(upTo: Limits.requestBodyBytes)
        let time = clock.now.epochMilliseconds
        let push = try AcceptedPush.check(input, now: time)
        if push.validateOnly {
            throw APIError.badRequest("a schedule to keep is stored, not only checked", field: "validate_only")
        }
        let schedule: StoredSchedule?
        do {
            schedule = try await scheduling.schedule(push, request: String(buffer: body), applicationID: app.id, now: time, id: id)
        } catch let error as StoreError where error.reason == .uniqueViolation {
            throw APIError(
                .conflict, code: "conflict", message: "schedule \(id) exists already (perhaps fired or cancelled)", field: "schedule_id")
        }
        guard let schedule else {
            throw APIError.badRequest(
                "the push is not for later: give scheduleAt, scheduleIn, scheduleLocal or schedule beyond the next minute",
                field: "scheduleAt")
        }
        return EditedResponse(status: .created, response: Created(scheduleID: schedule.id))
    }
}
