import HeraldCore
import HeraldStore
import Hummingbird
import struct Foundation.Data
import class Foundation.JSONDecoder

/// Schedules: the application's pushes for later, their time changed or cancelled through the
/// same operations as `/v1/schedules` (`PushScheduling`).
extension DashboardController {
    @Sendable func schedulesPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            return try await schedules(signed, app, failed: nil)
        }
    }

    /// A new time (UTC) for one schedule; a refusal is shown beside that schedule's field.
    @Sendable func rescheduleSchedule(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let id = try PushScheduling.scheduleID(context.parameters.get("schedule"))
            do {
                let at = try Self.time(form["schedule_at"] ?? "", field: "scheduleAt")
                _ = try await pushes.scheduling.change(id: id, applicationID: app.id, ["scheduleAt": .int(at)], now: clock.now.epochMilliseconds)
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/schedules")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await schedules(signed, app, failed: (id, form["schedule_at"] ?? "", error), status: error.status)
            }
        }
    }

    @Sendable func cancelSchedule(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            try await pushes.scheduling.cancel(id: try PushScheduling.scheduleID(context.parameters.get("schedule")), applicationID: app.id)
            return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/schedules")
        }
    }

    // MARK: Pages

    /// The list; `failed` is a schedule whose change was refused, with what was typed and why.
    func schedules(
        _ signed: SignedIn, _ app: App, failed: (id: String, typed: String, error: APIError)?, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let schedules = try await pushes.scheduling.schedules(applicationID: app.id)
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "app": ["uuid": app.id.lowercasedString],
            "schedules": schedules.map { schedule -> [String: Any] in
                let input = try? (try? schedule.requestMembers()).map {
                    try JSONDecoder().decode(PushInput.self, from: Data(JSONValue.object($0).jsonText.utf8))
                }
                var row: [String: Any] = [
                    "id": schedule.id, "app": app.id.lowercasedString, "due": Self.time(schedule.scheduledFor),
                    "at": failed?.id == schedule.id ? failed?.typed ?? "" : Self.timeInput(schedule.scheduledFor),
                    "message": input?.message?.body ?? "", "target": Self.targetSummary(input?.target),
                ]
                // Only a scheduleLocal push says so (Mustache takes an empty string as true).
                if let local = schedule.localTime { row["local"] = local }
                // A recurring schedule: its rule instead of a time to change (PUT changes its rule).
                if let recurrence = schedule.recurrence {
                    let zone = recurrence.local ? "the local time of each device" : recurrence.timeZone
                    row["recurring"] = "\(recurrence.cron) in \(zone)" + (recurrence.paused ? ", paused" : "")
                }
                if failed?.id == schedule.id { row["error"] = failed?.error.message }
                return row
            },
        ]
        var layout = try await layout(signed, title: "Schedules", app: app)
        if let failed { layout["errorMessage"] = "Not saved: " + failed.error.message }
        return pages.page("schedules", view, layout: layout, status: status)
    }

    // MARK: Helpers

    /// Epoch milliseconds as a `datetime-local` field's value (UTC, to the minute).
    static func timeInput(_ millis: Int64) -> String {
        String(time(millis).prefix(16))
    }

    /// Who a push goes to, in a few words.
    static func targetSummary(_ target: PushInput.Target?) -> String {
        var parts: [String] = []
        if let platforms = target?.platforms, !platforms.isEmpty { parts.append("platforms " + platforms.joined(separator: ", ")) }
        if let topics = target?.topics, !topics.isEmpty { parts.append("topics " + topics.joined(separator: ", ")) }
        if let users = target?.customUserIDs, !users.isEmpty { parts.append("users " + users.joined(separator: ", ")) }
        if let devices = target?.devices, !devices.isEmpty { parts.append("\(devices.count) devices") }
        if let audience = target?.audience, audience != .null { parts.append("audience " + audienceText(audience)) }
        return parts.isEmpty ? "every device" : parts.joined(separator: "; ")
    }

    /// An audience expression on one line (`AudienceExpression.compactText`), at most
    /// `audienceTextLimit` characters; as JSON if it does not read as one (it was checked when
    /// stored, so it does).
    static func audienceText(_ audience: JSONValue) -> String {
        guard let expression = try? AudienceExpression.parse(audience, path: "target.audience") else { return audience.jsonText }
        return expression.compactText(limit: audienceTextLimit)
    }

    /// The longest audience text a schedule's target line shows.
    static var audienceTextLimit: Int { 300 }
}
