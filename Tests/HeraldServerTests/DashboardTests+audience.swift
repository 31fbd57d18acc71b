import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldServer

/// Issue 19 on the dashboard: the composer's audience expression and its count, the preview of a
/// relative badge, a device's badge count and its reset, a schedule's audience on its target
/// line. CSRF, escaping and tenant isolation, on both databases.
extension DashboardTests {
    /// An app with three iOS devices: on topics news+a, news+b and sports, users u0, u1, u2.
    struct Audience {
        var fixture: Fixture
        var devices: [UUID]

        var app: String { fixture.app.id.lowercasedString }

        static func make(_ harness: ServerHarness, _ client: any TestClientProtocol, tenant: String) async throws -> Audience {
            let fixture = try await Fixture.make(harness.store, tenantName: tenant)
            // The devices send plain custom user ids.
            _ = try await client.execute(
                uri: "/admin/v1/apps/\(fixture.app.id.lowercasedString)", method: .put, headers: bearer(harness.adminToken),
                body: body(#"{"verify_custom_user_id":false}"#))
            var devices: [UUID] = []
            for (index, tags) in [["news", "a"], ["news", "b"], ["sports"]].enumerated() {
                let registered = try await client.execute(
                    uri: "/v1/registration", method: .post, headers: basic(fixture.platform.id.lowercasedString, fixture.platformSecret),
                    body: body(
                        #"{"os":"ios","registration_token":"\#(randomAPNsToken())","custom_user_id":"u\#(index)","tags":[\#(tags.map { Dashboard.json($0) }.joined(separator: ","))]}"#
                    )
                ).json()
                let uuid = try #require(registered["device_uuid"] as? String)
                devices.append(try #require(UUID(text: uuid)))
            }
            return Audience(fixture: fixture, devices: devices)
        }

        func badge(_ store: Store, _ index: Int) async throws -> Int64? {
            try await store.devices.badge(applicationID: fixture.app.id, uuid: devices[index])?.badge
        }
    }

    @Test(arguments: Backend.available)
    func theComposerCountsAnAudienceWithTheStoresCountAndRefusesABadOneAtItsField(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let world = try await Audience.make(harness, client, tenant: "ours")
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let csrf = try await Dashboard.csrf(client, session)
            func post(_ fields: [String: String]) async throws -> (HTTPResponse.Status, String) {
                var fields = fields
                fields["csrf"] = csrf
                let response = try await client.execute(
                    uri: "/dashboard/apps/\(world.app)/compose", method: .post, headers: Dashboard.formHeaders(session),
                    body: Dashboard.form(fields))
                return (response.status, String(buffer: response.body))
            }
            func count(_ html: String) -> String? {
                html.firstMatch(of: /id="audience-count"[^>]*>Reaches <strong>(\d+)<\/strong>/).map { String($0.1) }
            }
            let expression = #"{"and":[{"topic":"news"},{"not":{"custom_user_id":"u1"}}]}"#

            // "Preview audience": no message needed; the count is the store's, as validate_only answers it.
            let (status, previewed) = try await post(["action": "audience", "audience": expression])
            #expect(status == .ok)
            #expect(count(previewed) == "1")
            let push = try AcceptedPush.check(
                try JSONDecoder().decode(
                    PushInput.self, from: Data(#"{"message":{"body":"x"},"target":{"audience":\#(expression)},"validate_only":true}"#.utf8)),
                now: 0)
            #expect(try await harness.store.pushes.audienceCount(of: push, applicationID: world.fixture.app.id) == 1)
            #expect(previewed.contains("&quot;custom_user_id&quot;:&quot;u1&quot;"), "the expression stays in its field, escaped")
            // Combined with the other target fields by intersection.
            #expect(count(try await post(["action": "audience", "audience": #"{"topic":"news"}"#, "custom_user_ids": "u0, u2"]).1) == "1")
            #expect(count(try await post(["action": "audience", "topics": "news"]).1) == "2")
            // Validate only shows the count with the payloads.
            let (validStatus, validated) = try await post(["action": "validate", "message": "hi", "audience": expression])
            #expect(validStatus == .ok)
            #expect(count(validated) == "1" && validated.contains("id=\"previews\""))

            // The API's errors, at the audience field, naming the JSON path; what was typed comes back escaped.
            let (badStatus, bad) = try await post([
                "action": "audience", "audience": #"{"and":[{"topic":"news"},{"<script>alert(1)</script>":"x"}]}"#,
            ])
            #expect(badStatus == .badRequest)
            #expect(
                bad.contains(#"id="audience_error">target.audience.and[1].&lt;script&gt;alert(1)&lt;/script&gt;: unknown audience member"#))
            #expect(!bad.contains("<script>alert(1)"))
            #expect(count(bad) == nil)
            for (text, message) in [
                (#"{"and":[]}"#, "target.audience.and: &#39;and&#39; needs at least one operand"),
                (#"{"not":{"topic":"news"}}"#, "target.audience.not: a &#39;not&#39; alone"),
                ("news", "the audience must be JSON"),
            ] {
                let (status, html) = try await post(["action": "send", "message": "hi", "audience": text])
                #expect(status == .badRequest, "\(text)")
                #expect(html.contains(#"<p class="field-error" id="audience_error">\#(message)"#), "\(text)")
            }
            // A location push is a geofence, which takes no audience expression.
            let location = try await client.execute(
                uri: "/v1/locations", method: .post, headers: basic(world.app, world.fixture.apiKey),
                body: body(#"{"name":"Dock","lat":"49.28","long":"-123.12","rad":150}"#)
            ).json()
            let locationID = try #require((location["id"] as? NSNumber)?.int64Value)
            let (placeStatus, place) = try await post([
                "action": "send", "message": "hi", "target_location": "location:\(locationID)", "expiry": "2040-01-01T10:00",
                "audience": expression,
            ])
            #expect(placeStatus == .badRequest)
            #expect(place.contains(#"id="audience_error">a location push targets platforms and topics, not an audience expression"#))
            #expect(try await harness.store.geofences.list(applicationID: world.fixture.app.id, page: 1, size: 10).total == 0)

            // Sent: the push reaches the counted device only.
            let sent = try await client.execute(
                uri: "/dashboard/apps/\(world.app)/compose", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": csrf, "action": "send", "message": "hi", "audience": expression]))
            #expect(sent.status == .seeOther)
            let receipt = try #require(sent.headers[.location]?.split(separator: "/").last.flatMap { UUID(text: String($0)) })
            let stored = try #require(try await harness.store.pushes.find(id: receipt, applicationID: world.fixture.app.id))
            #expect(try stored.accepted().push.audienceExpression != nil)
        }
    }

    @Test(arguments: Backend.available)
    func aRelativeBadgeIsPreviewedAsTheChangeNotAPlaceholder(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let world = try await Audience.make(harness, client, tenant: "ours")
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let csrf = try await Dashboard.csrf(client, session)
            for (badge, shown) in [("auto", "+1"), ("+3", "+3"), ("-2", "-2")] {
                let response = try await client.execute(
                    uri: "/dashboard/apps/\(world.app)/compose", method: .post, headers: Dashboard.formHeaders(session),
                    body: Dashboard.form([
                        "csrf": csrf, "action": "validate", "message": "hi", "platform_ios": "on", "custom_ios": #"{"badge":"\#(badge)"}"#,
                    ]))
                let html = String(buffer: response.body)
                #expect(response.status == .ok)
                #expect(html.contains("&quot;badge&quot;:&quot;\(shown)&quot;"), "\(badge)")
                #expect(!html.contains("1000000"), "\(badge): the renderer's check number leaks")
                #expect(html.contains("each device&#39;s own count \(shown)"), "\(badge)")
            }
            // A number is sent as it is, with no note.
            let fixed = try await client.execute(
                uri: "/dashboard/apps/\(world.app)/compose", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form([
                    "csrf": csrf, "action": "validate", "message": "hi", "platform_ios": "on", "custom_ios": #"{"badge":7}"#,
                ]))
            let html = String(buffer: fixed.body)
            #expect(html.contains("&quot;badge&quot;:7") && !html.contains("badge-note"))
        }
    }

    @Test(arguments: Backend.available)
    func aDevicesBadgeIsShownAndResetOnlyWithTheCSRFTokenAndOnlyInItsTenant(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let world = try await Audience.make(harness, client, tenant: "theirs")
            let device = world.devices[0].lowercasedString
            let found = try #require(try await harness.store.devices.badge(applicationID: world.fixture.app.id, uuid: world.devices[0]))
            try await harness.store.devices.setBadge(5, deviceID: found.deviceID)
            let page = "/dashboard/apps/\(world.app)/devices/\(device)"

            let session = try await Dashboard.signIn(client, harness.adminToken)
            let shown = String(buffer: try await client.execute(uri: page, method: .get, headers: Dashboard.cookie(session)).body)
            #expect(shown.contains(#"<span id="device-badge">5</span>"#))
            for csrf in [nil, "", "forged"] as [String?] {
                var fields: [String: String] = [:]
                fields["csrf"] = csrf
                let refused = try await client.execute(
                    uri: page + "/badge", method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(fields))
                #expect(refused.status == .forbidden)
                #expect(try await world.badge(harness.store, 0) == 5)
            }

            // Another tenant's operator: not found, for the page and the form, and nothing changes.
            let ours = try #require(try await harness.store.tenants.create(name: "ours"))
            let (_, token) = try await harness.store.adminTokens.create(tenantID: ours.id, name: "ours")
            let theirSession = try await Dashboard.signIn(client, token)
            let theirCSRF = try await Dashboard.csrf(client, theirSession)
            #expect(try await client.execute(uri: page, method: .get, headers: Dashboard.cookie(theirSession)).status == .notFound)
            let crossed = try await client.execute(
                uri: page + "/badge", method: .post, headers: Dashboard.formHeaders(theirSession), body: Dashboard.form(["csrf": theirCSRF])
            )
            #expect(crossed.status == .notFound)
            #expect(try await world.badge(harness.store, 0) == 5)
            // Another application's device under this one's path is not found either.
            let other = try await Fixture.make(harness.store, tenantName: "other")
            let csrf = try await Dashboard.csrf(client, session)
            let elsewhere = try await client.execute(
                uri: "/dashboard/apps/\(other.app.id.lowercasedString)/devices/\(device)/badge", method: .post,
                headers: Dashboard.formHeaders(session), body: Dashboard.form(["csrf": csrf]))
            #expect(elsewhere.status == .notFound)
            #expect(try await world.badge(harness.store, 0) == 5)

            // With the token: reset to 0, the page says so and the admin API reads 0.
            let reset = try await client.execute(
                uri: page + "/badge", method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(["csrf": csrf]))
            #expect(reset.status == .ok)
            let html = String(buffer: reset.body)
            #expect(html.contains(#"<span id="device-badge">0</span>"#) && html.contains("The badge count is reset to 0."))
            #expect(try await world.badge(harness.store, 0) == 0)
            let read = try await client.execute(
                uri: "/admin/v1/apps/\(world.app)/devices/\(device)/badge", method: .get, headers: bearer(harness.adminToken)
            ).json()
            #expect((read["badge"] as? NSNumber)?.intValue == 0)
        }
    }

    @Test(arguments: Backend.available)
    func aSchedulesTargetLineShowsItsAudienceCompactlyAndEscaped(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let world = try await Audience.make(harness, client, tenant: "ours")
            let user = Dashboard.json(Self.payload)
            _ = try await client.execute(
                uri: "/v1/push", method: .post, headers: basic(world.app, world.fixture.apiKey),
                body: body(
                    #"{"message":{"body":"later"},"target":{"platforms":["ios"],"audience":{"and":[{"topic":"news"},{"or":[{"custom_user_id":"u0"},{"custom_user_id":\#(user)}]}]}},"scheduleIn":3600}"#
                )
            ).json()
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let page = try await client.execute(
                uri: "/dashboard/apps/\(world.app)/schedules", method: .get, headers: Dashboard.cookie(session))
            let html = String(buffer: page.body)
            let target = try #require(html.firstMatch(of: /<dd class="schedule-target">([^<]*)<\/dd>/).map { String($0.1) })
            #expect(target.hasPrefix("platforms ios; audience topic:news and (custom_user_id:u0 or custom_user_id:&quot;&lt;script&gt;"))
            #expect(!html.contains("<script>alert"))
        }
    }

    @Test func theTargetLineCutsALongAudience() throws {
        let leaves = (0..<300).map { #"{"topic":"t\#($0)"}"# }.joined(separator: ",")
        let audience = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"or":[\#(leaves)]}"#.utf8))
        let line = DashboardController<HeraldRequestContext>.targetSummary(PushInput.Target(audience: audience))
        #expect(line.hasPrefix("audience topic:t0 or topic:t1 or "))
        #expect(line.hasSuffix("(300 leaves)") && line.count <= 310)
    }
}
