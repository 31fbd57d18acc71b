import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldServer

/// Issue 19's quiet time and recurring schedules on the dashboard: the composer sends
/// `quiet_time` and `schedule` through the API's own reading and checks (faults at their
/// fields), a recurring schedule's rule, next times and pause/resume, the application's delivery
/// settings and a device's quiet time. CSRF, escaping and tenant isolation, on both databases.
extension DashboardTests {
    @Test(arguments: Backend.available)
    func theComposerSendsQuietTimeAndARepeatThroughTheAPIsChecks(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let world = try await Audience.make(harness, client, tenant: "ours")
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let csrf = try await Dashboard.csrf(client, session)
            func post(_ fields: [String: String]) async throws -> (HTTPResponse.Status, String, String?) {
                var fields = fields
                fields["csrf"] = csrf
                let response = try await client.execute(
                    uri: "/dashboard/apps/\(world.app)/compose", method: .post, headers: Dashboard.formHeaders(session),
                    body: Dashboard.form(fields))
                return (response.status, String(buffer: response.body), response.headers[.location])
            }
            let repeating = [
                "action": "send", "message": "hi", "platform_ios": "on", "schedule": "repeat", "repeat_cron": "0 8 * * MON-FRI",
            ]

            // Each refusal is the API's, at its field; what was typed comes back escaped.
            for (change, field, message) in [
                (["repeat_cron": "0 8 * * MON-SUN-FRI"], "repeat_cron", "more than one &#39;-&#39;"),
                (["repeat_cron": ""], "repeat_cron", "schedule.cron is required"),
                (
                    ["repeat_time_zone": "Mars/<b>Base</b>"], "repeat_time_zone",
                    "&#39;Mars/&lt;b&gt;Base&lt;/b&gt;&#39; is not an IANA time zone"
                ),
                (["repeat_count": "0"], "repeat_count", "schedule.count is a whole number from 1"),
                (["repeat_count": "many"], "repeat_count", "schedule.count must be"),
                (["repeat_until": "2020-01-01 00:00"], "repeat_until", "has passed"),
                (["repeat_until": "soon"], "repeat_until", "YYYY-MM-DD HH:MM"),
                (["expiry": "2040-01-01 10:00"], "expiry", "cannot share one expiryTime"),
                (["quiet_time": "loud"], "quiet_time", "&#39;loud&#39; is not hold, silent or ignore"),
            ] as [([String: String], String, String)] {
                let (status, html, _) = try await post(repeating.merging(change) { $1 })
                #expect(status == .badRequest || status == .conflict, "\(change)")
                let error = html.firstMatch(of: /class="field-error"( id="[a-z_]+_error")?>([^<]*)</)
                #expect(
                    html.contains(#"<p class="field-error" id="\#(field)_error">"#)
                        || (field == "expiry" && html.contains("cannot share one expiryTime")),
                    "\(change): \(error.map { String($0.2) } ?? "no error")")
                #expect(html.contains(message), "\(change): \(error.map { String($0.2) } ?? "no error")")
                #expect(!html.contains("<b>Base</b>"))
            }
            #expect(try await harness.store.schedules.list(applicationID: world.fixture.app.id).isEmpty, "nothing refused is stored")

            // The zone starts as the app's default; the count and the quiet time reach the stored push.
            _ = try await client.execute(
                uri: "/admin/v1/apps/\(world.app)/delivery", method: .put, headers: bearer(harness.adminToken),
                body: body(#"{"default_time_zone":"Asia/Tokyo"}"#))
            let page = String(
                buffer: try await client.execute(
                    uri: "/dashboard/apps/\(world.app)/compose", method: .get, headers: Dashboard.cookie(session)
                ).body)
            #expect(page.contains(#"name="repeat_time_zone" list="time-zones" autocomplete="off" value="Asia/Tokyo""#))
            let (status, _, location) = try await post(
                repeating.merging(["repeat_time_zone": "Europe/Paris", "repeat_count": "3", "quiet_time": "hold"]) { $1 })
            #expect(status == .seeOther)
            let schedule = try #require(try await harness.store.schedules.list(applicationID: world.fixture.app.id).first)
            #expect(location == "/dashboard/apps/\(world.app)/schedules?scheduled=\(schedule.id)#schedule-\(schedule.id)")
            #expect(
                schedule.recurrence?.cron == "0 8 * * MON-FRI" && schedule.recurrence?.timeZone == "Europe/Paris"
                    && schedule.recurrence?.count == 3)
            #expect(try schedule.requestMembers()["quiet_time"] == .string("hold"))

            // In each device's own zone: `local`, and the zone field left out (the API refuses the
            // two together).
            let (localStatus, _, _) = try await post(
                repeating.merging(["repeat_time_zone": "Asia/Tokyo", "repeat_local": "on", "repeat_cron": "30 7 * * *"]) { $1 })
            #expect(localStatus == .seeOther)
            let local = try #require(
                try await harness.store.schedules.list(applicationID: world.fixture.app.id).first { $0.recurrence?.cron == "30 7 * * *" })
            #expect(local.recurrence?.local == true)
            // A refused local repeat comes back with the box still ticked.
            let (refusedStatus, refusedPage, _) = try await post(
                repeating.merging(["repeat_local": "on", "repeat_cron": "61 7 * * *"]) { $1 })
            #expect(refusedStatus == .badRequest)
            #expect(refusedPage.contains(#"<input type="checkbox" name="repeat_local" id="repeat_local" checked>"#))

            // An immediate push with "silent": stored with its policy.
            let (sentStatus, _, sent) = try await post(["action": "send", "message": "now", "platform_ios": "on", "quiet_time": "silent"])
            #expect(sentStatus == .seeOther)
            let receipt = try #require(sent?.split(separator: "/").last.flatMap { UUID(text: String($0)) })
            let stored = try #require(try await harness.store.pushes.find(id: receipt, applicationID: world.fixture.app.id))
            #expect(try stored.accepted().push.quietTime == .silent)
        }
    }

    @Test(arguments: Backend.available)
    func aRecurringScheduleShowsItsRuleAndIsPausedAndResumedOnlyWithTheCSRFToken(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let world = try await Audience.make(harness, client, tenant: "theirs")
            let message = Dashboard.json("daily " + Self.payload)
            let created = try await client.execute(
                uri: "/v1/push", method: .post, headers: basic(world.app, world.fixture.apiKey),
                body: body(
                    #"{"message":{"body":\#(message)},"target":{"platforms":["ios"]},"schedule":{"cron":"0 9 * * *","time_zone":"Europe/Paris","count":4}}"#
                )
            ).json()
            let id = try #require(created["schedule_id"] as? String)
            let schedules = "/dashboard/apps/\(world.app)/schedules"
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let html = String(buffer: try await client.execute(uri: schedules, method: .get, headers: Dashboard.cookie(session)).body)
            #expect(html.contains(#"<dd class="schedule-recurrence"><code>0 9 * * *</code> in Europe/Paris, at most 4 pushes</dd>"#))
            #expect(html.contains(#"<dd class="schedule-fired">0 sent of 4</dd>"#))
            #expect(
                html.matches(
                    of:
                        /<li><time>\d{4}-\d\d-\d\dT0[78]:00:00Z<\/time> <span class="hint">\(\d{4}-\d\d-\d\dT09:00:00\+0[12]:00\)<\/span><\/li>/
                ).count == 4)
            #expect(html.contains("daily &lt;script&gt;") && !html.contains("<script>alert"))
            func paused() async throws -> Bool? {
                try await harness.store.schedules.find(id: id, applicationID: world.fixture.app.id)?.recurrence?.paused
            }

            for csrf in [nil, "forged"] as [String?] {
                var fields: [String: String] = [:]
                fields["csrf"] = csrf
                let refused = try await client.execute(
                    uri: "\(schedules)/\(id)/pause", method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(fields))
                #expect(refused.status == .forbidden)
                #expect(try await paused() == false)
            }
            // Another tenant's operator: not found, nothing paused.
            let ours = try #require(try await harness.store.tenants.create(name: "ours"))
            let (_, token) = try await harness.store.adminTokens.create(tenantID: ours.id, name: "ours")
            let theirSession = try await Dashboard.signIn(client, token)
            let crossed = try await client.execute(
                uri: "\(schedules)/\(id)/pause", method: .post, headers: Dashboard.formHeaders(theirSession),
                body: Dashboard.form(["csrf": try await Dashboard.csrf(client, theirSession)]))
            #expect(crossed.status == .notFound)
            #expect(try await paused() == false)

            let csrf = try await Dashboard.csrf(client, session)
            let pause = try await client.execute(
                uri: "\(schedules)/\(id)/pause", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": csrf]))
            #expect(pause.status == .seeOther && pause.headers[.location] == "\(schedules)#schedule-\(id)")
            #expect(try await paused() == true)
            let pausedPage = String(buffer: try await client.execute(uri: schedules, method: .get, headers: Dashboard.cookie(session)).body)
            #expect(pausedPage.contains("status-paused") && pausedPage.contains("/schedules/\(id)/resume"))
            let resume = try await client.execute(
                uri: "\(schedules)/\(id)/resume", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": csrf]))
            #expect(resume.status == .seeOther)
            #expect(try await paused() == false)

            // A one-time schedule cannot be paused: the API's 409, nothing changed.
            let once = try await client.execute(
                uri: "/v1/push", method: .post, headers: basic(world.app, world.fixture.apiKey),
                body: body(#"{"message":{"body":"once"},"target":{"platforms":["ios"]},"scheduleIn":3600}"#)
            ).json()
            let onceID = try #require(once["schedule_id"] as? String)
            let refused = try await client.execute(
                uri: "\(schedules)/\(onceID)/pause", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": csrf]))
            #expect(refused.status == .conflict)
        }
    }

    @Test(arguments: Backend.available)
    func theDeliverySettingsAndADevicesQuietTimeAreEditedAsTheAdminAPIDoes(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let world = try await Audience.make(harness, client, tenant: "theirs")
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let signedIn = session
            let csrf = try await Dashboard.csrf(client, session)
            let delivery = "/dashboard/apps/\(world.app)/delivery"
            let device = "/dashboard/apps/\(world.app)/devices/\(world.devices[0].lowercasedString)"
            func settings() async throws -> AppDeliverySettings {
                try await harness.store.deliverySettings.find(applicationID: world.fixture.app.id)
            }
            func own() async throws -> QuietTime? {
                try await harness.store.devices.quietTime(applicationID: world.fixture.app.id, uuid: world.devices[0])?.quietTime
            }
            func post(_ uri: String, _ fields: [String: String], session: String? = nil) async throws -> (HTTPResponse.Status, String) {
                let response = try await client.execute(
                    uri: uri, method: .post, headers: Dashboard.formHeaders(session ?? signedIn), body: Dashboard.form(fields))
                return (response.status, String(buffer: response.body))
            }

            // Refused without the CSRF token, and each field the API refuses, at its field; nothing saved.
            let good = ["default_time_zone": "Europe/Paris", "rate_per_second": "", "quiet_time_start": "21:00", "quiet_time_end": "08:00"]
            #expect(try await post(delivery, good.merging(["csrf": "forged"]) { $1 }).0 == .forbidden)
            #expect(
                try await post(device + "/quiet_time", ["csrf": "forged", "quiet_time_start": "22:00", "quiet_time_end": "07:00"]).0
                    == .forbidden)
            for (change, field, message) in [
                (
                    ["default_time_zone": "Mars/<i>x</i>"], "default_time_zone",
                    "&#39;Mars/&lt;i&gt;x&lt;/i&gt;&#39; is not an IANA time zone"
                ),
                (["rate_per_second": "0"], "rate_per_second", "rate_per_second is a whole number"),
                (["rate_per_second": "fast"], "rate_per_second", "rate_per_second must be"),
                (["quiet_time_start": "9pm"], "quiet_time_start", "&#39;9pm&#39; is not a time of day as HH:MM"),
                (["quiet_time_end": ""], "quiet_time_end", "&#39;&#39; is not a time of day as HH:MM"),
                (["quiet_time_end": "21:00"], "quiet_time_end", "a quiet time must end at another time"),
            ] as [([String: String], String, String)] {
                let (status, html) = try await post(delivery, good.merging(change) { $1 }.merging(["csrf": csrf]) { $1 })
                #expect(status == .badRequest, "\(change)")
                #expect(html.contains(#"<p class="field-error" id="\#(field)_error">\#(message)"#), "\(change)")
                #expect(!html.contains("<i>x</i>"))
                #expect(try await settings() == AppDeliverySettings(), "\(change)")
            }
            // Saved, as the admin API reads it; emptied, removed.
            let (saved, _) = try await post(delivery, good.merging(["csrf": csrf, "rate_per_second": "50"]) { $1 })
            #expect(saved == .seeOther)
            #expect(
                try await settings()
                    == AppDeliverySettings(
                        defaultTimeZone: "Europe/Paris", ratePerSecond: 50, quietTime: QuietTime(startMinute: 21 * 60, endMinute: 8 * 60)))
            let appPage = String(
                buffer: try await client.execute(uri: "/dashboard/apps/\(world.app)", method: .get, headers: Dashboard.cookie(session)).body
            )
            #expect(appPage.contains(#"<dd id="delivery-quiet">21:00 to 08:00, in each device&#39;s zone</dd>"#))

            // The device shows the app's default until it has its own.
            let before = String(buffer: try await client.execute(uri: device, method: .get, headers: Dashboard.cookie(session)).body)
            #expect(before.contains(#"<dd id="device-quiet">21:00 to 08:00 (the application&#39;s default)</dd>"#))
            #expect(before.contains("the application&#39;s default, Europe/Paris"))
            let (badStatus, bad) = try await post(
                device + "/quiet_time", ["csrf": csrf, "quiet_time_start": "22:00", "quiet_time_end": "7:00"])
            #expect(badStatus == .badRequest && bad.contains(#"id="quiet_time_end_error">&#39;7:00&#39; is not a time of day"#))
            #expect(try await own() == nil)
            let (setStatus, set) = try await post(
                device + "/quiet_time", ["csrf": csrf, "quiet_time_start": "22:30", "quiet_time_end": "06:45"])
            #expect(setStatus == .ok && set.contains("22:30 to 06:45 (its own)"))
            #expect(try await own() == QuietTime(startMinute: 22 * 60 + 30, endMinute: 6 * 60 + 45))
            // Another tenant's operator: not found, nothing changed.
            let ours = try #require(try await harness.store.tenants.create(name: "ours"))
            let (_, token) = try await harness.store.adminTokens.create(tenantID: ours.id, name: "ours")
            let theirs = try await Dashboard.signIn(client, token)
            let theirCSRF = try await Dashboard.csrf(client, theirs)
            #expect(
                try await post(device + "/quiet_time", ["csrf": theirCSRF, "quiet_time_start": "", "quiet_time_end": ""], session: theirs).0
                    == .notFound)
            #expect(
                try await post(delivery, good.merging(["csrf": theirCSRF, "rate_per_second": "9"]) { $1 }, session: theirs).0 == .notFound)
            #expect(try await own() != nil)
            #expect(try await settings().ratePerSecond == 50)
            let (clearStatus, _) = try await post(device + "/quiet_time", ["csrf": csrf, "quiet_time_start": "", "quiet_time_end": ""])
            #expect(clearStatus == .ok)
            #expect(try await own() == nil)
        }
    }

    @Test func dateFieldsReadISOWithASpaceOrAT() throws {
        typealias Controller = DashboardController<HeraldRequestContext>
        #expect(try Controller.time("2039-06-01 08:15", field: "f") == Controller.time("2039-06-01T08:15", field: "f"))
        #expect(try Controller.time(" 2039-06-01T08:15:30 ", field: "f") == 2_190_528_930_000)
        #expect(throws: APIError.self) { try Controller.time("06/01/2039 08:15 AM", field: "f") }
        #expect(Controller.timeInput(2_190_528_900_000) == "2039-06-01 08:15")
    }
}
