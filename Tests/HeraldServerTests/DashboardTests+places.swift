import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// The Schedules, Topics and Locations pages and the composer's location target: CSRF, refusals
/// shown at their field, escaping, tenant isolation; each change checked in the store.
extension DashboardTests {
    /// An app with a push scheduled an hour ahead, a topic and a location, made through the API.
    struct Places {
        var fixture: Fixture
        var schedule: String
        var topic: Int64
        var location: Int64

        var app: String { fixture.app.id.lowercasedString }

        static func make(_ harness: ServerHarness, _ client: any TestClientProtocol, tenant: String, text: String = "Harbour") async throws
            -> Places
        {
            let fixture = try await Fixture.make(harness.store, tenantName: tenant)
            let auth = basic(fixture.app.id.lowercasedString, fixture.apiKey)
            let scheduled = try await client.execute(
                uri: "/v1/push", method: .post, headers: auth,
                body: body(#"{"message":{"body":\#(Dashboard.json(text))},"target":{"platforms":["ios"]},"scheduleIn":3600}"#)
            ).json()
            let topic = try await client.execute(
                uri: "/v2/topics", method: .post, headers: auth, body: body(#"{"name":\#(Dashboard.json(text.lowercased()))}"#)
            ).json()
            let location = try await client.execute(
                uri: "/v1/locations", method: .post, headers: auth,
                body: body(#"{"name":\#(Dashboard.json(text)),"lat":"49.28","long":"-123.12","rad":150}"#)
            ).json()
            return Places(
                fixture: fixture, schedule: try #require(scheduled["schedule_id"] as? String),
                topic: try #require((topic["id"] as? NSNumber)?.int64Value),
                location: try #require((location["id"] as? NSNumber)?.int64Value))
        }

        /// Every form of the new pages, with the fields each needs.
        var forms: [(String, [String: String])] {
            [
                ("/dashboard/apps/\(app)/schedules/\(schedule)", ["schedule_at": "2040-01-01T10:00"]),
                ("/dashboard/apps/\(app)/schedules/\(schedule)/cancel", [:]),
                ("/dashboard/apps/\(app)/topics", ["name": "sneaky"]),
                ("/dashboard/apps/\(app)/topics/\(topic)/delete", [:]),
                ("/dashboard/apps/\(app)/locations", ["name": "Sneaky", "lat": "1", "long": "2", "rad": "30"]),
                ("/dashboard/apps/\(app)/locations/\(location)", ["name": "Moved", "lat": "1", "long": "2", "rad": "30"]),
                ("/dashboard/apps/\(app)/locations/\(location)/delete", [:]),
                ("/dashboard/apps/\(app)/location_groups", ["name": "Sneaky", "location_\(location)": "on"]),
                (
                    "/dashboard/apps/\(app)/compose",
                    [
                        "message": "m", "target_location": "location:\(location)", "trigger_type": "enter", "expiry": "2040-01-01T10:00",
                        "action": "send",
                    ]
                ),
            ]
        }

        /// Nothing the forms could change has changed.
        func expectUnchanged(_ store: Store) async throws {
            let id = fixture.app.id
            let schedule = try #require(try await store.schedules.find(id: schedule, applicationID: id))
            #expect(schedule.scheduledFor < Int64(Date().timeIntervalSince1970 * 1000) + 2 * 3_600_000)
            #expect(try await store.topics.list(applicationID: id, query: nil, hasExpiry: nil, page: 1, size: 10).total == 1)
            let locations = try await store.locations.list(applicationID: id, query: nil, changedSince: nil, page: 1, size: 10).locations
            #expect(locations.map(\.name) == ["Harbour"])
            #expect(try await store.locationGroups.list(applicationID: id, query: nil, changedSince: nil, page: 1, size: 10).total == 0)
            #expect(try await store.geofences.list(applicationID: id, page: 1, size: 10).total == 0)
        }
    }

    @Test(arguments: Backend.available)
    func theNewPagesRefuseEveryFormWithoutTheCSRFToken(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let places = try await Places.make(harness, client, tenant: "ours")
            let session = try await Dashboard.signIn(client, harness.adminToken)
            for (uri, fields) in places.forms {
                for csrf in [nil, "forged"] as [String?] {
                    var fields = fields
                    fields["csrf"] = csrf
                    let refused = try await client.execute(
                        uri: uri, method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(fields))
                    #expect(refused.status == .forbidden, "\(uri)")
                }
            }
            try await places.expectUnchanged(harness.store)
        }
    }

    @Test(arguments: Backend.available)
    func aTenantTokenReachesNoneOfAnotherTenantsSchedulesTopicsOrLocations(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let theirs = try await Places.make(harness, client, tenant: "theirs")
            let ours = try #require(try await harness.store.tenants.create(name: "ours"))
            let (_, token) = try await harness.store.adminTokens.create(tenantID: ours.id, name: "ours")
            let session = try await Dashboard.signIn(client, token)
            let app = theirs.app
            for uri in [
                "/dashboard/apps/\(app)/schedules", "/dashboard/apps/\(app)/topics", "/dashboard/apps/\(app)/locations",
                "/dashboard/apps/\(app)/locations/\(theirs.location)", "/dashboard/apps/\(app)/pushes",
            ] {
                let page = try await client.execute(uri: uri, method: .get, headers: Dashboard.cookie(session))
                #expect(page.status == .notFound, "\(uri)")
                #expect(!String(buffer: page.body).contains("Harbour"), "\(uri)")
            }
            let csrf = try await Dashboard.csrf(client, session)
            for (uri, fields) in theirs.forms {
                var fields = fields
                fields["csrf"] = csrf
                let refused = try await client.execute(
                    uri: uri, method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(fields))
                #expect(refused.status == .notFound, "\(uri)")
            }
            try await theirs.expectUnchanged(harness.store)
        }
    }

    @Test(arguments: Backend.available)
    func schedulesTopicsAndLocationsChangeThroughTheAPIsOperationsAndShowRefusalsAtTheirField(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let places = try await Places.make(harness, client, tenant: "ours")
            let id = places.fixture.app.id
            let app = places.app
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let csrf = try await Dashboard.csrf(client, session)
            func post(_ uri: String, _ fields: [String: String]) async throws -> TestResponse {
                var fields = fields
                fields["csrf"] = csrf
                return try await client.execute(
                    uri: uri, method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(fields))
            }
            func html(_ response: TestResponse) -> String { String(buffer: response.body) }

            // Schedules: a time that is not one is refused beside that schedule's field; a new time is stored; cancel.
            let badTime = try await post("/dashboard/apps/\(app)/schedules/\(places.schedule)", ["schedule_at": "soon"])
            #expect(badTime.status == .badRequest)
            #expect(html(badTime).contains(#"<p class="field-error" id="schedule_at_\#(places.schedule)_error">"#))
            let moved = try await post("/dashboard/apps/\(app)/schedules/\(places.schedule)", ["schedule_at": "2040-01-01T10:00"])
            #expect(moved.status == .seeOther)
            #expect(try await harness.store.schedules.find(id: places.schedule, applicationID: id)?.scheduledFor == 2_209_024_800_000)
            let list = try await client.execute(uri: "/dashboard/apps/\(app)/schedules", method: .get, headers: Dashboard.cookie(session))
            #expect(html(list).contains("2040-01-01T10:00:00Z"))
            #expect(try await post("/dashboard/apps/\(app)/schedules/\(places.schedule)/cancel", [:]).status == .seeOther)
            #expect(try await harness.store.schedules.find(id: places.schedule, applicationID: id) == nil)

            // A recurring schedule shows its rule, and no time to change (its rule changes through PUT).
            let recurring = try await client.execute(
                uri: "/v1/push", method: .post, headers: basic(places.fixture.app.id.lowercasedString, places.fixture.apiKey),
                body: body(
                    #"{"message":{"body":"Weekly"},"target":{"platforms":["ios"]},"schedule":{"cron":"0 9 * * MON","time_zone":"Europe/Paris"}}"#
                )
            ).json()
            let recurringID = try #require(recurring["schedule_id"] as? String)
            let recurringList = html(
                try await client.execute(uri: "/dashboard/apps/\(app)/schedules", method: .get, headers: Dashboard.cookie(session)))
            #expect(recurringList.contains(#"<dd class="schedule-recurrence"><code>0 9 * * MON</code> in Europe/Paris, never ends</dd>"#))
            #expect(!recurringList.contains("schedule_at_\(recurringID)"))
            #expect(try await post("/dashboard/apps/\(app)/schedules/\(recurringID)/cancel", [:]).status == .seeOther)
            // One in each device's local time says so.
            let local = try await client.execute(
                uri: "/v1/push", method: .post, headers: basic(places.fixture.app.id.lowercasedString, places.fixture.apiKey),
                body: body(#"{"message":{"body":"Daily"},"target":{"platforms":["ios"]},"schedule":{"cron":"0 8 * * *","local":true}}"#)
            ).json()
            let localID = try #require(local["schedule_id"] as? String)
            let localRuleList = html(
                try await client.execute(uri: "/dashboard/apps/\(app)/schedules", method: .get, headers: Dashboard.cookie(session)))
            #expect(
                localRuleList.contains(
                    #"<dd class="schedule-recurrence"><code>0 8 * * *</code> in the local time of each device, never ends</dd>"#))
            // Its next times are wall-clock times (each listed at the instant the earliest zone reaches it).
            #expect(localRuleList.contains("T08:00:00 in each device"), "\(localRuleList)")
            #expect(try await post("/dashboard/apps/\(app)/schedules/\(localID)/cancel", [:]).status == .seeOther)

            // The composer's local time (each device's wall-clock time): one that is none is refused at the schedule.
            let morning = ["message": "Good morning", "platform_ios": "on", "schedule": "local", "action": "send"]
            var notATime = morning
            notATime["schedule_local"] = "tomorrow"
            let refusedLocal = try await post("/dashboard/apps/\(app)/compose", notATime)
            #expect(refusedLocal.status == .badRequest)
            #expect(
                html(refusedLocal).range(
                    of: #"id="schedule_local"[^>]*>\s*<p class="field-error" id="schedule_error">"#, options: .regularExpression) != nil)
            var atEight = morning
            atEight["schedule_local"] = "2039-06-01T08:15"
            #expect(try await post("/dashboard/apps/\(app)/compose", atEight).status == .seeOther)
            let localList = try await client.execute(
                uri: "/dashboard/apps/\(app)/schedules", method: .get, headers: Dashboard.cookie(session))
            #expect(html(localList).contains("local time 2039-06-01T08:15"))

            // Topics: a name too long is refused at the name; a new one is listed with its subscribers; delete.
            let longName = try await post("/dashboard/apps/\(app)/topics", ["name": String(repeating: "t", count: 300)])
            #expect(longName.status == .badRequest)
            #expect(html(longName).contains(#"id="topic-name-error""#))
            let past = try await post("/dashboard/apps/\(app)/topics", ["name": "late", "expire_at": "2001-01-01T00:00"])
            #expect(past.status == .conflict, "a time already past conflicts with the clock, as in the API")
            #expect(html(past).contains(#"id="topic-expire-error""#))
            let created = try await post("/dashboard/apps/\(app)/topics", ["name": "Offers"])
            #expect(created.status == .ok)
            #expect(html(created).contains("Topic “offers” created."))
            #expect(try await post("/dashboard/apps/\(app)/topics/\(places.topic)/delete", [:]).status == .seeOther)
            let topics = try await harness.store.topics.list(applicationID: id, query: nil, hasExpiry: nil, page: 1, size: 10).topics
            #expect(topics.map(\.name) == ["offers"])

            // Locations: a latitude out of range is refused at the latitude; a new one is stored; a group of it.
            let north = try await post("/dashboard/apps/\(app)/locations", ["name": "Pole", "lat": "100", "long": "0", "rad": "50"])
            #expect(north.status == .badRequest)
            #expect(html(north).contains(#"<p class="field-error" id="lat-error">"#))
            #expect(
                try await post("/dashboard/apps/\(app)/locations", ["name": "Pier", "lat": "49.3", "long": "-123.1", "rad": "80"]).status
                    == .seeOther)
            let all = try await harness.store.locations.list(applicationID: id, query: nil, changedSince: nil, page: 1, size: 10).locations
            let pier = try #require(all.first { $0.name == "Pier" })
            #expect(pier.latitude == 49.3 && pier.longitude == -123.1 && pier.radius == 80)
            let unnamed = try await post("/dashboard/apps/\(app)/location_groups", ["name": " ", "location_\(pier.id)": "on"])
            #expect(unnamed.status == .badRequest)
            #expect(html(unnamed).contains(#"id="group-name-error""#))
            #expect(
                try await post("/dashboard/apps/\(app)/location_groups", ["name": "Shore", "location_\(pier.id)": "on"]).status == .seeOther
            )
            let group = try #require(
                try await harness.store.locationGroups.list(applicationID: id, query: nil, changedSince: nil, page: 1, size: 10).groups
                    .first)
            #expect(group.locations.map(\.id) == [pier.id])
            #expect(
                try await post(
                    "/dashboard/apps/\(app)/locations/\(pier.id)", ["name": "Pier 2", "lat": "49.31", "long": "-123.1", "rad": "90"]
                ).status == .seeOther)
            #expect(try await harness.store.locations.find(id: pier.id, applicationID: id)?.name == "Pier 2")

            // The composer's location target: the expiry is required (said at the expiry), then a geofence is made.
            let target = [
                "message": "Welcome ashore", "target_location": "group:\(group.id)", "trigger_type": "exit", "action": "send",
                "topics": "offers",
            ]
            let noExpiry = try await post("/dashboard/apps/\(app)/compose", target)
            #expect(noExpiry.status == .badRequest)
            #expect(html(noExpiry).range(of: #"id="expiry"[^>]*>\s*<p class="field-error">"#, options: .regularExpression) != nil)
            var withExpiry = target
            withExpiry["expiry"] = "2040-01-01T10:00"
            #expect(try await post("/dashboard/apps/\(app)/compose", withExpiry).status == .seeOther)
            let geofence = try #require(try await harness.store.geofences.list(applicationID: id, page: 1, size: 10).geofences.first)
            #expect(geofence.definition.triggerType == .exit)
            #expect(geofence.definition.tags == ["offers"])
            #expect(geofence.locations.map(\.id) == [pier.id])
            #expect(geofence.definition.expiryTime == 2_209_024_800_000)
            // Its page edits it as PUT /v1/geofence does: a past expiry is refused at the expiry.
            let geofencePage = try await client.execute(
                uri: "/dashboard/apps/\(app)/geofences/\(geofence.id)", method: .get, headers: Dashboard.cookie(session))
            #expect(html(geofencePage).contains("Welcome ashore"))
            let expired = try await post(
                "/dashboard/apps/\(app)/geofences/\(geofence.id)",
                ["message": "Bye", "trigger_type": "enter", "expiry": "2001-01-01T00:00"])
            #expect(expired.status == .conflict, "a time already past conflicts with the clock, as in the API")
            #expect(html(expired).contains(#"id="expiry-error""#))
            let edited = try await post(
                "/dashboard/apps/\(app)/geofences/\(geofence.id)",
                ["message": "Bye", "trigger_type": "enter", "expiry": "2041-01-01T10:00"])
            #expect(edited.status == .seeOther)
            let changed = try #require(try await harness.store.geofences.find(id: geofence.id, applicationID: id))
            #expect(changed.definition.triggerType == .enter && changed.definition.expiryTime == 2_240_647_200_000)
            #expect(Self.geofenceText(changed.definition.data) == "Bye")
            // A location a live geofence uses is not deleted; the page says why.
            let inUse = try await post("/dashboard/apps/\(app)/locations/\(pier.id)/delete", [:])
            #expect(inUse.status == .conflict)
            #expect(html(inUse).contains("used by geofences"))
            #expect(try await post("/dashboard/apps/\(app)/geofences/\(geofence.id)/delete", [:]).status == .seeOther)
            #expect(try await post("/dashboard/apps/\(app)/locations/\(pier.id)/delete", [:]).status == .seeOther)
        }
    }

    @Test func aTileServerIsAnHTTPURLWithItsPlaceholdersAndNothingThatEscapesTheCSP() {
        #expect(DashboardMapTiles(url: "https://tiles.example.com/{z}/{x}/{y}.png")?.origin == "https://tiles.example.com")
        #expect(DashboardMapTiles(url: "http://10.0.0.5:8080/t/{z}/{x}/{y}")?.origin == "http://10.0.0.5:8080")
        #expect(DashboardMapTiles(url: "https://tiles.example.com/{z}/{x}.png") == nil)
        #expect(DashboardMapTiles(url: "javascript:alert(1)//{z}/{x}/{y}") == nil)
        #expect(DashboardMapTiles(url: "https://a.example.com/{z}/{x}/{y}.png; script-src *") == nil)
        #expect(DashboardMapTiles(url: "https://user@a.example.com/{z}/{x}/{y}.png") == nil)
    }

    static func geofenceText(_ data: [String: JSONValue]) -> String? {
        if case .string(let text)? = data["ios"]?.objectValue?["alertBody"] { return text }
        return nil
    }

    @Test(arguments: Backend.available)
    func theNewPagesShowWhatWasTypedAsText(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let payload = Self.payload
            let places = try await Places.make(harness, client, tenant: "ours", text: payload)
            let app = places.app
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let csrf = try await Dashboard.csrf(client, session)
            let group = try await client.execute(
                uri: "/dashboard/apps/\(app)/location_groups", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": csrf, "name": payload, "description": payload, "location_\(places.location)": "on"]))
            #expect(group.status == .seeOther)
            let escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&lt;img src=x onerror=alert(1)&gt;"
            for uri in [
                "/dashboard/apps/\(app)/schedules", "/dashboard/apps/\(app)/topics", "/dashboard/apps/\(app)/locations",
                "/dashboard/apps/\(app)/locations/\(places.location)", "/dashboard/apps/\(app)/compose",
            ] {
                let page = try await client.execute(uri: uri, method: .get, headers: Dashboard.cookie(session))
                #expect(page.status == .ok, "\(uri)")
                let html = String(buffer: page.body)
                #expect(!html.contains("<script>alert"), "\(uri) echoes a script tag")
                #expect(!html.contains("<img src=x"), "\(uri) echoes an img tag")
                #expect(html.contains(escaped.lowercased()) || html.contains(escaped), "\(uri) shows the text")
            }
            // A refused form shows what was typed, escaped.
            let refused = try await client.execute(
                uri: "/dashboard/apps/\(app)/locations", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": csrf, "name": payload, "lat": payload, "long": "0", "rad": "10"]))
            #expect(refused.status == .badRequest)
            let html = String(buffer: refused.body)
            #expect(html.contains(#"id="lat-error""#))
            #expect(!html.contains("<script>alert"))
        }
    }
}
