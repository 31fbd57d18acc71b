import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.Data
import struct Foundation.Date
import class Foundation.JSONDecoder
import struct Foundation.TimeZone
import struct Foundation.UUID

/// Schedules: the application's pushes for later, their time changed or cancelled through the
/// same operations as `/v1/schedules` (`PushScheduling`).
extension DashboardController {
    @Sendable func schedulesPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            var notice: String?
            if let scheduled = request.uri.queryParameters.get("scheduled"), !scheduled.isEmpty {
                // Straight from the composer: a push for later is here until it goes out.
                notice =
                    "Scheduled: a push for later is listed here, under Schedules (its schedule \(scheduled)), and appears under Push notifications when it goes out."
            }
            return try await schedules(signed, app, failed: nil, notice: notice)
        }
    }

    /// A new time (UTC) for one schedule; a refusal is shown beside that schedule's field.
    @Sendable func rescheduleSchedule(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let id = try PushScheduling.scheduleID(context.parameters.get("schedule"))
            do {
                let at = try Self.time(form["schedule_at"] ?? "", field: "scheduleAt")
                _ = try await pushes.scheduling.change(
                    id: id, applicationID: app.id, ["scheduleAt": .int(at)], now: clock.now.epochMilliseconds)
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/schedules")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await schedules(signed, app, failed: (id, form["schedule_at"] ?? "", error), status: error.status)
            }
        }
    }

    /// Pauses a recurring schedule, as `POST /v1/schedules/:id/pause` does.
    @Sendable func pauseSchedule(_ request: Request, context: Context) async throws -> Response {
        try await changeSchedule(request, context) { id, app in _ = try await pushes.scheduling.pause(id: id, applicationID: app) }
    }

    /// Resumes a paused recurring schedule from its next occurrence, as `POST /v1/schedules/:id/resume` does.
    @Sendable func resumeSchedule(_ request: Request, context: Context) async throws -> Response {
        try await changeSchedule(request, context) { id, app in _ = try await pushes.scheduling.resume(id: id, applicationID: app) }
    }

    /// A schedule's form action: `change` on the signed-in scope's application's schedule, then
    /// back to that schedule on the Schedules page.
    private func changeSchedule(
        _ request: Request, _ context: Context, _ change: (_ id: String, _ applicationID: UUID) async throws -> Void
    ) async throws -> Response {
        try await action(request) { signed, _ in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let id = try PushScheduling.scheduleID(context.parameters.get("schedule"))
            try await change(id, app.id)
            return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/schedules#schedule-\(id)")
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
        _ signed: SignedIn, _ app: App, failed: (id: String, typed: String, error: APIError)?, notice: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let schedules = try await pushes.scheduling.schedules(applicationID: app.id)
        let now = clock.now.epochMilliseconds
        var rows: [[String: Any]] = []
        for schedule in schedules {
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
            // A recurring schedule: its rule, next occurrences and past receipts instead of a
            // time to change (PUT changes its rule), with pause or resume.
            if let recurrence = schedule.recurrence {
                row["recurring"] = Self.recurrenceView(
                    recurrence, next: schedule.scheduledFor, now: now,
                    past: try await pushes.scheduling.pastOccurrences(of: schedule) ?? [],
                    app: app)
            }
            if failed?.id == schedule.id { row["error"] = failed?.error.message }
            rows.append(row)
        }
        let view: [String: Any] = ["csrf": signed.session.csrf, "app": ["uuid": app.id.lowercasedString], "schedules": rows]
        var layout = try await layout(signed, title: "Schedules", app: app)
        if let failed { layout["errorMessage"] = "Not saved: " + failed.error.message }
        if let notice { layout["notice"] = notice }
        return pages.page("schedules", view, layout: layout, status: status)
    }

    /// What the page shows of a recurring schedule: the rule in words, how many pushes it has
    /// sent, whether it is paused, its next occurrences (UTC, and in its own zone) and its past
    /// occurrences, each fired one linking to its push.
    static func recurrenceView(
        _ recurrence: StoredRecurrence, next: Int64, now: Int64, past: [PastOccurrence], app: App
    ) -> [String: Any] {
        // A local-time rule has no zone of its own: its times are each device's wall clock.
        let zone = recurrence.local ? nil : TimeZone(identifier: recurrence.timeZone) ?? .gmt
        var ends: [String] = []
        if let until = recurrence.until { ends.append("until \(time(until))") }
        if let count = recurrence.count { ends.append("at most \(count) \(count == 1 ? "push" : "pushes")") }
        var view: [String: Any] = [
            "cron": recurrence.cron, "zone": recurrence.local ? "the local time of each device" : recurrence.timeZone,
            "ends": ends.isEmpty ? "never ends" : ends.joined(separator: ", "),
            "fired": "\(recurrence.firedCount) sent" + (recurrence.count.map { " of \($0)" } ?? ""),
            "next": PushScheduling.nextOccurrences(recurrence, next: next, now: now).map { occurrence in
                let local =
                    zone.map { localTime(occurrence.at, in: $0) }
                    ?? occurrence.localTime.map { "\($0) in each device's own zone" } ?? ""
                return ["utc": time(occurrence.at), "local": local]
            },
            "past": past.map { occurrence -> [String: Any] in
                var row: [String: Any] = ["due": time(occurrence.dueAt), "state": occurrence.state.rawValue]
                switch occurrence.state {
                case .fired:
                    if let receipt = occurrence.pushID {
                        row["receipt"] = receipt
                        row["href"] = "/dashboard/apps/\(app.id.lowercasedString)/pushes/\(receipt)"
                    }
                    row["status"] = occurrence.status ?? "deleted"
                    var counts =
                        occurrence.targeted.map {
                            "\($0) targeted, \(occurrence.delivered ?? 0) delivered, \(occurrence.failed ?? 0) failed"
                        } ?? ""
                    if let missed = occurrence.missedTimeZones {
                        // A local occurrence that began late: the zones it reached too long ago.
                        counts +=
                            (counts.isEmpty ? "" : "; ")
                            + "\(missed) time \(missed == 1 ? "zone" : "zones") missed (no server ran at their time)"
                    }
                    row["counts"] = counts
                case .skipped:
                    row["status"] = "skipped (missed while no server ran)"
                    row["counts"] = occurrence.skippedUntil.map { "every occurrence up to \(time($0))" } ?? ""
                }
                return row
            },
            "hasPast": !past.isEmpty,
        ]
        if recurrence.paused { view["paused"] = true }
        return view
    }

    /// Epoch milliseconds as an ISO 8601 time with the offset of `zone` (`2039-06-01T10:15:00+02:00`).
    static func localTime(_ millis: Int64, in zone: TimeZone) -> String {
        Date(timeIntervalSince1970: Double(millis) / 1000).formatted(Date.ISO8601FormatStyle(timeZoneSeparator: .colon, timeZone: zone))
    }

    // MARK: Helpers

    /// Epoch milliseconds as a date-and-time field's value: UTC, to the minute, `2039-06-01 08:15`.
    static func timeInput(_ millis: Int64) -> String {
        String(time(millis).prefix(16)).replacing("T", with: " ")
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
