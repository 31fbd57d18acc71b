import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// `herald import pivotal`, the real executable: a live Herald seeded with an application (the
/// source: Herald serves the Pivotal API) imported into a second, empty one.
@Suite struct PivotalImportCommandTests {
    static let appUUID = DeviceTransferTests.appUUID
    static let apiKey = DeviceTransferTests.apiKey
    static let iosUUID = DeviceTransferTests.iosUUID
    static let androidUUID = DeviceTransferTests.androidUUID
    static let secret = DeviceTransferTests.secret

    static var appAuth: HTTPFields { basic(appUUID, apiKey) }

    /// The import command's arguments, from the source at `from` into the target at `port`.
    static func arguments(from: String, target port: Int, token: String) -> [String] {
        [
            "import", "pivotal", "--from", from, "--app", "\(appUUID):\(apiKey)", "--platform", "\(iosUUID):\(secret)",
            "--platform", "\(androidUUID):\(secret)", "--url", "http://127.0.0.1:\(port)", "--token=\(token)",
        ]
    }

    // MARK: Seeding

    /// Devices (registered, imported inactive), topics with expiry, a pending schedule, locations,
    /// a group and geofences, on the source.
    static func seed(_ client: any TestClientProtocol, root: HTTPFields) async throws {
        try await DeviceTransferTests.makeApp(client, root)
        // Topics first: a device's tags create the topics it names, without expiry.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for topic in [
            #"{"name":"news","expireAt":\#(now + 86_400_000)}"#, #"{"name":"offers","expireAt":\#(now + 7_200_000)}"#,
            #"{"name":"forever"}"#,
        ] {
            let created = try await client.execute(uri: "/v2/topics", method: .post, headers: appAuth, body: body(topic))
            #expect(created.status == .created, "\(String(buffer: created.body))")
        }
        let ios = basic(iosUUID, secret)
        for index in 0..<3 {
            let response = try await client.execute(
                uri: "/v1/registration", method: .post, headers: ios,
                body: body(
                    #"{"os":"ios","os_version":"17.\#(index)","device_alias":"phone \"\#(index)\"","device_model":"iPhone15,2","device_manufacturer":"Apple","registration_token":"\#(String(repeating: "ab", count: 31))\#(index)0","custom_user_id":"user-\#(index)","tags":["news","sport"]}"#
                ))
            #expect(response.status == .ok)
        }
        // 60 android devices (more than one page of 50), one inactive, through the source's import.
        var lines = (0..<60).map { index in
            #"{"device_uuid":"\#(UUID().uuidString.lowercased())","platform_uuid":"\#(androidUUID)","os":"android","registration_token":"fcm-token-\#(index)","tags":["news"\#(index % 2 == 0 ? #","weather""# : "")],"custom_user_id":\#(index % 3 == 0 ? "\"member-\(index)\"" : "null")}"#
        }
        lines.append(
            #"{"device_uuid":"\#(UUID().uuidString.lowercased())","platform_uuid":"\#(androidUUID)","os":"android","registration_token":"fcm-gone","tags":[],"active":false}"#
        )
        let report = try await DeviceTransferTests.importing(client, root, lines.joined(separator: "\n") + "\n")
        #expect(report["imported"] as? Int == 61)

        let scheduled = try await client.execute(
            uri: "/v1/push", method: .post, headers: appAuth,
            body: body(#"{"message":{"body":"Later"},"target":{"topics":["news"]},"scheduleAt":\#(now + 86_400_000)}"#))
        #expect(scheduled.status.code < 300, "\(String(buffer: scheduled.body))")
        // One in each device's local time (Herald's addition), years ahead: it is brought as the
        // wall-clock time it is, not as the instant it falls at in some zone.
        let local = try await client.execute(
            uri: "/v1/push", method: .post, headers: appAuth,
            body: body(#"{"message":{"body":"Morning"},"target":{"platforms":["ios"]},"scheduleLocal":"2031-12-24T09:00"}"#))
        #expect(local.status.code < 300, "\(String(buffer: local.body))")

        var locations: [Int] = []
        for (name, lat, long) in [("Shop", "49.2827", "-123.1207"), ("Office", "51.5", "-0.12"), ("Shop", "49.2827", "-123.1207")] {
            let created = try await client.execute(
                uri: "/v1/locations", method: .post, headers: appAuth,
                body: body(#"{"name":"\#(name)","lat":"\#(lat)","long":"\#(long)","rad":150}"#))
            #expect(created.status == .created)
            locations.append(try #require(try created.json()["id"] as? Int))
        }
        let group = try await client.execute(
            uri: "/v1/location_groups", method: .post, headers: appAuth,
            body: body(#"{"name":"Downtown","description":"shops","location_ids":[\#(locations[0]),\#(locations[1])]}"#))
        #expect(group.status == .created)
        for (place, platform) in [(locations[0], "all"), (locations[2], "ios")] {
            let geofence = try await client.execute(
                uri: "/v1/geofence", method: .post, headers: appAuth,
                body: body(
                    #"""
                    {"tags":["news"],"locations":[\#(place)],"trigger_type":"enter","start_time":0,"expiry_time":\#(now + 86_400_000),
                     "platform":"\#(platform)","data":{"ios":{"alertBody":"Welcome","hasAction":false,"applicationBadgeNumber":0},"android":{"message":"Welcome"}}}
                    """#))
            #expect(geofence.status == .created, "\(String(buffer: geofence.body))")
        }
    }

    // MARK: Comparing through the API

    /// Everything the Pivotal API shows of the application, without the ids and times a server
    /// gives (locations named instead of numbered), as comparable JSON text.
    static func shown(_ client: any TestClientProtocol) async throws -> [String: String] {
        func get(_ path: String) async throws -> Any {
            let response = try await client.execute(uri: path, method: .get, headers: appAuth)
            #expect(response.status == .ok, "\(path): \(String(buffer: response.body))")
            return try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
        }
        func pages(_ path: String, _ key: String) async throws -> [[String: Any]] {
            var all: [[String: Any]] = []
            var page = 1
            while true {
                let answer = try #require(try await get("\(path)?size=50&page=\(page)") as? [String: Any])
                all += try #require(answer[key] as? [[String: Any]])
                guard page < (answer["totalPages"] as? Int ?? 1) else { return all }
                page += 1
            }
        }
        func text(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
        }
        /// Without ids and times, nested locations too; then as sorted JSON texts.
        func plain(_ object: [String: Any]) throws -> [String: Any] {
            var object = object.filter { !["id", "created_at", "updated_at", "createdAt", "updatedAt", "schedule_id"].contains($0.key) }
            if let locations = object["locations"] as? [[String: Any]] {
                object["locations"] = try locations.map { try text(try plain($0)) }.sorted()
            }
            return object
        }
        func texts(_ objects: [[String: Any]]) throws -> String {
            try objects.map { try text(try plain($0)) }.sorted().joined(separator: "\n")
        }
        return [
            "registrations": try texts(try await pages("/v2/registrations", "registrations")),
            "topics": try texts(try await pages("/v2/topics", "topics")),
            "custom_user_ids": try text(try await get("/v2/custom_user_ids")),
            "schedules": try texts(try #require(try await get("/v1/schedules") as? [[String: Any]])),
            "locations": try texts(try await pages("/v1/locations", "locations")),
            "groups": try texts(try await pages("/v1/location_groups", "location_groups")),
            "geofences": try texts(try await pages("/v1/geofence", "geofences")),
        ]
    }

    // MARK: Tests

    @Test(arguments: Backend.available)
    func importRecreatesEverythingAndASecondRunChangesNothing(_ backend: Backend) async throws {
        try await ServerHarness.run(backend, setup: .live) { sourceHarness, source in
            try await Self.seed(source, root: bearer(sourceHarness.adminToken))
            let seeded = try await Self.shown(source)
            #expect(seeded["registrations"]?.contains("fcm-gone") == true)
            #expect(seeded["schedules"]?.contains("Later") == true)
            #expect(seeded["schedules"]?.contains("2031-12-24T09:00") == true)
            try await ServerHarness.run(backend, setup: .live) { targetHarness, target in
                let arguments = Self.arguments(
                    from: "http://127.0.0.1:\(try #require(source.port))", target: try #require(target.port),
                    token: targetHarness.adminToken)
                let (status, out, err) = try await DeviceTransferCommandTests.herald(arguments)
                #expect(status == 0, "\(out)\n\(err)")
                #expect(out.contains("Imported:"))
                #expect(out.contains("application: 1 created, 0 unchanged"))
                #expect(out.contains("platforms: 2 created, 0 unchanged"))
                #expect(out.contains("topics: 5 created, 0 unchanged"))
                #expect(out.contains("locations: 3 created, 0 unchanged"))
                #expect(out.contains("location groups: 1 created, 0 unchanged"))
                #expect(out.contains("geofences: 2 created, 0 unchanged"))
                #expect(out.contains("devices: 64 created, 0 updated, 0 unchanged"))
                #expect(out.contains("schedules: 2 created, 0 unchanged"))
                #expect(out.contains("upload the provider credentials of ios platform \(Self.iosUUID)"))
                #expect(err.contains("imported 64 devices"))

                // Everything the API shows is the same on both.
                let imported = try await Self.shown(target)
                for (key, value) in seeded {
                    #expect(imported[key] == value, "\(key) differs:\n\(value)\n\(imported[key] ?? "nothing")")
                }

                // Twice: nothing written, and it says so.
                let (again, againOut, _) = try await DeviceTransferCommandTests.herald(arguments)
                #expect(again == 0)
                #expect(againOut.contains("Nothing changed"), "\(againOut)")
                #expect(againOut.contains("devices: 0 created, 0 updated, 64 unchanged"))
                #expect(againOut.contains("geofences: 0 created, 2 unchanged"))
                #expect(againOut.contains("schedules: 0 created, 2 unchanged"))
                #expect(try await Self.shown(target) == imported)

                // The PCF SDK after the move: its cached device uuid and the platform's old credentials.
                let registrations = try #require(
                    try await target.execute(
                        uri: "/v2/registrations?platformUuid=\(Self.iosUUID)", method: .get, headers: Self.appAuth
                    ).json()["registrations"] as? [[String: Any]])
                let device = try #require(registrations.first?["device_uuid"] as? String)
                let put = try await target.execute(
                    uri: "/v1/registration/\(device)", method: .put, headers: basic(Self.iosUUID, Self.secret),
                    body: body(
                        #"{"os":"ios","os_version":"18.1","registration_token":"\#(String(repeating: "cd", count: 32))","tags":{"subscribe":["offers"],"unsubscribe":[]}}"#
                    ))
                #expect(put.status == .ok, "\(String(buffer: put.body))")
                let got = try await target.execute(
                    uri: "/v1/registration/\(device)", method: .get, headers: basic(Self.iosUUID, Self.secret))
                #expect(got.status == .ok)
                let answer = try got.json()
                #expect(answer["device_uuid"] as? String == device)
                #expect(answer["os_version"] as? String == "18.1")
                #expect(answer["registration_token"] as? String == String(repeating: "cd", count: 32))
                #expect(
                    Set(answer.keys).isSuperset(of: [
                        "os", "os_version", "device_model", "device_manufacturer", "device_alias", "device_uuid", "registration_token",
                        "tags", "active",
                    ]))
                #expect((answer["tags"] as? [[String: Any]])?.compactMap { $0["text"] as? String }.sorted() == ["news", "offers", "sport"])
            }
        }
    }

    /// A source that refuses, fails, answers something else, or stalls: the import stops with a
    /// message naming the cause, and the summary says nothing was written, which is true.
    @Test(arguments: Backend.available)
    func aBadSourceStopsTheImportClearlyBeforeAnythingIsWritten(_ backend: Backend) async throws {
        let gate = Gate()
        let router = Router()
        router.get("unauthorized/**") { _, _ in Response(status: .unauthorized) }
        router.get("broken/**") { _, _ in
            Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: "database down")))
        }
        router.get("garbage/**") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "<html>Welcome</html>"))) }
        router.get("shapeless/**") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: #"{"hello":"world"}"#))) }
        router.get("stalled/**") { _, _ -> Response in
            await gate.wait()
            return Response(status: .ok)
        }
        let fake = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await fake.test(.live) { fakeClient in
            let fakePort = try #require(fakeClient.port)
            try await ServerHarness.run(backend, setup: .live) { targetHarness, target in
                // Lets the stalled request end whatever happens, so the fake server can stop.
                defer { gate.open() }
                let cases = [
                    (
                        "unauthorized",
                        "the source refused the credentials (401) on GET /v2/registrations?size=1&page=1: check --app UUID:API_KEY"
                    ),
                    ("broken", "the source answered 500 to GET /v2/registrations?size=1&page=1, with 'database down'"),
                    ("garbage", "the source's answer to GET /v2/registrations?size=1&page=1 is not JSON ('<html>Welcome</html>')"),
                    (
                        "shapeless",
                        "the source's answer to GET /v2/registrations?size=1&page=1 is not the Pivotal Push API's shape: no totalRegistrations"
                    ),
                    ("stalled", "the source did not answer GET /v2/registrations?size=1&page=1 within 2 s (--source-timeout)"),
                ]
                for (path, message) in cases {
                    let arguments = Self.arguments(
                        from: "http://127.0.0.1:\(fakePort)/\(path)", target: try #require(target.port), token: targetHarness.adminToken)
                    let started = ContinuousClock.now
                    // A short timeout only where the source stalls: a loaded machine may be slow to answer the others.
                    let (status, out, _) = try await DeviceTransferCommandTests.herald(
                        arguments + (path == "stalled" ? ["--source-timeout", "2"] : []))
                    #expect(status == 1)
                    #expect(out.contains("Import stopped: \(message)"), "\(path): \(out)")
                    #expect(out.contains("Nothing was written to the target."), "\(out)")
                    if path == "stalled" { #expect(ContinuousClock.now - started < .seconds(30)) }
                }
                // True: the target has no such application.
                let app = try await target.execute(
                    uri: "/admin/v1/apps/\(Self.appUUID)", method: .get, headers: bearer(targetHarness.adminToken))
                #expect(app.status == .notFound)
            }
        }
    }

    /// A platform the target cannot take: the summary says so and which devices stayed behind;
    /// once it can, a second run brings those and only those (what an interrupted run does too).
    @Test(arguments: Backend.available)
    func whatCouldNotBeBroughtIsSaidAndARerunBringsOnlyTheRest(_ backend: Backend) async throws {
        try await ServerHarness.run(backend, setup: .live) { sourceHarness, source in
            try await Self.seed(source, root: bearer(sourceHarness.adminToken))
            try await ServerHarness.run(backend, setup: .live) { targetHarness, target in
                let root = bearer(targetHarness.adminToken)
                // The target has the ios platform's uuid under another application: refused, and its devices stay behind.
                let other = try await target.execute(uri: "/admin/v1/apps", method: .post, headers: root, body: body(#"{"name":"Other"}"#))
                let otherUUID = try #require(try other.json()["uuid"] as? String)
                let taken = try await target.execute(
                    uri: "/admin/v1/apps/\(otherUUID)/platforms", method: .post, headers: root,
                    body: body(#"{"type":"ios","uuid":"\#(Self.iosUUID)","secret":"\#(Self.secret)"}"#))
                #expect(taken.status == .created)
                let arguments = Self.arguments(
                    from: "http://127.0.0.1:\(try #require(source.port))", target: try #require(target.port),
                    token: targetHarness.adminToken)
                let (status, out, _) = try await DeviceTransferCommandTests.herald(arguments)
                #expect(status == 0, "\(out)")
                #expect(out.contains("platforms: 1 created, 0 unchanged"))
                #expect(out.contains("devices: 61 created, 0 updated, 0 unchanged"))
                #expect(
                    out.contains(
                        "platform \(Self.iosUUID): the target has a platform with this uuid under another application or of another type; its 3 devices were not brought"
                    ))

                // Once the uuid is free, a second run brings the rest and only the rest.
                #expect(
                    try await target.execute(uri: "/admin/v1/platforms/\(Self.iosUUID)", method: .delete, headers: root).status
                        == .noContent)
                let (rerun, rerunOut, _) = try await DeviceTransferCommandTests.herald(arguments)
                #expect(rerun == 0, "\(rerunOut)")
                #expect(rerunOut.contains("platforms: 1 created, 1 unchanged"))
                #expect(rerunOut.contains("devices: 3 created, 0 updated, 61 unchanged"))
                #expect(rerunOut.contains("topics: 0 created, 5 unchanged"))
                #expect(try await Self.shown(target) == (try await Self.shown(source)))
            }
        }
    }
}

extension PivotalImportCommandTests {
    /// Pivotal's documented registrations show neither tags, nor custom user ids, nor the
    /// platform: a proxy in front of the seeded Herald takes them out. The tags come back from
    /// the topics, the custom user ids from `/v2/custom_user_ids` and `q`.
    @Test(arguments: Backend.available)
    func pivotalsDocumentedRegistrationsGetTheirTagsFromTheTopics(_ backend: Backend) async throws {
        try await ServerHarness.run(backend, setup: .live) { sourceHarness, source in
            try await Self.seed(source, root: bearer(sourceHarness.adminToken))
            let sourcePort = try #require(source.port)
            let router = Router()
            router.get("pivotal/**") { request, _ -> Response in
                let path = String(request.uri.path.dropFirst("/pivotal".count)) + (request.uri.query.map { "?" + $0 } ?? "")
                var forwarded = HTTPClientRequest(url: "http://127.0.0.1:\(sourcePort)\(path)")
                forwarded.headers.add(name: "Authorization", value: request.headers[.authorization] ?? "")
                let answer = try await HTTPClient.shared.execute(forwarded, timeout: .seconds(30))
                var bytes = try await answer.body.collect(upTo: 1 << 20)
                if path.hasPrefix("/v2/registrations"),
                    var page = try JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any]
                {
                    page["registrations"] = (page["registrations"] as? [[String: Any]])?.map {
                        $0.filter { !["tags", "custom_user_id", "platform_uuid"].contains($0.key) }
                    }
                    bytes = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: page))
                }
                return Response(status: .init(code: Int(answer.status.code)), body: .init(byteBuffer: bytes))
            }
            let proxy = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await proxy.test(.live) { proxyClient in
                try await ServerHarness.run(backend, setup: .live) { targetHarness, target in
                    let arguments = Self.arguments(
                        from: "http://127.0.0.1:\(try #require(proxyClient.port))/pivotal", target: try #require(target.port),
                        token: targetHarness.adminToken)
                    let (status, out, err) = try await DeviceTransferCommandTests.herald(arguments)
                    #expect(status == 0, "\(out)\n\(err)")
                    #expect(out.contains("devices: 64 created, 0 updated, 0 unchanged"))
                    // Herald's `q` matches custom user ids, as Pivotal's does: each comes back.
                    #expect(
                        out.contains(
                            "custom user ids: the source's registrations do not show them; 23 of the 23 listed by /v2/custom_user_ids were given back to their 23 devices"
                        ),
                        "\(out)")
                    #expect(!out.contains("could not be told apart"), "\(out)")
                    let seeded = try await Self.shown(source)
                    let imported = try await Self.shown(target)
                    #expect(imported["registrations"]?.split(separator: "\n").count == 64)
                    #expect(imported["registrations"] == seeded["registrations"])
                    #expect(imported["registrations"]?.contains("news") == true)
                    #expect(imported["custom_user_ids"] == seeded["custom_user_ids"])
                    for key in ["topics", "schedules", "locations", "groups", "geofences"] {
                        #expect(imported[key] == seeded[key], "\(key)")
                    }
                    let (again, againOut, _) = try await DeviceTransferCommandTests.herald(arguments)
                    #expect(again == 0)
                    #expect(againOut.contains("Nothing changed"), "\(againOut)")
                }
            }
        }
    }
}

extension PivotalImportCommandTests {
    /// The target fails midway (its device import answers 503): the command stops with status 1,
    /// names the failure, and lists exactly what it had written; once the target works again, a
    /// second run brings the rest and only the rest, and the target then shows what the source does.
    @Test(arguments: Backend.available)
    func aTargetFailingMidwayIsReportedExactlyAndARerunFinishes(_ backend: Backend) async throws {
        try await ServerHarness.run(backend, setup: .live) { sourceHarness, source in
            try await Self.seed(source, root: bearer(sourceHarness.adminToken))
            try await ServerHarness.run(backend, setup: .live) { targetHarness, target in
                let targetPort = try #require(target.port)
                let failing = Mutex(true)
                // A proxy in front of the target, refusing its device import while `failing`.
                let router = Router()
                for method in [HTTPRequest.Method.get, .post, .put, .delete] {
                    router.on("**", method: method) { request, _ -> Response in
                        if request.method == .post, request.uri.path.hasSuffix("/devices/import"), failing.withLock({ $0 }) {
                            return Response(
                                status: .serviceUnavailable, headers: [.contentType: "application/json"],
                                body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":"unavailable","message":"maintenance"}}"#)))
                        }
                        var forwarded = HTTPClientRequest(
                            url: "http://127.0.0.1:\(targetPort)\(request.uri.path)" + (request.uri.query.map { "?" + $0 } ?? ""))
                        forwarded.method = .init(rawValue: request.method.rawValue)
                        for field in request.headers where [.authorization, .contentType].contains(field.name) {
                            forwarded.headers.add(name: field.name.rawName, value: field.value)
                        }
                        forwarded.body = .bytes(try await request.body.collect(upTo: 64 << 20))
                        let answer = try await HTTPClient.shared.execute(forwarded, timeout: .seconds(60))
                        var headers = HTTPFields()
                        if let type = answer.headers.first(name: "Content-Type") { headers[.contentType] = type }
                        return Response(
                            status: .init(code: Int(answer.status.code)), headers: headers,
                            body: .init(byteBuffer: try await answer.body.collect(upTo: 64 << 20)))
                    }
                }
                let proxy = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                try await proxy.test(.live) { proxyClient in
                    let arguments = Self.arguments(
                        from: "http://127.0.0.1:\(try #require(source.port))", target: try #require(proxyClient.port),
                        token: targetHarness.adminToken)
                    let (status, out, err) = try await DeviceTransferCommandTests.herald(arguments)
                    #expect(status == 1, "\(out)\n\(err)")
                    #expect(out.contains("Import stopped: the target answered 503 to POST"), "\(out)")
                    #expect(out.contains("Written to the target before it stopped:"))
                    #expect(out.contains("application: 1 created, 0 unchanged"))
                    #expect(out.contains("geofences: 2 created, 0 unchanged"))
                    #expect(!out.contains("devices:"), "no device was written: \(out)")
                    #expect(!out.contains("schedules:"), "no schedule was written: \(out)")
                    // What it says it wrote is there, and nothing else.
                    let partial = try await Self.shown(target)
                    #expect(partial["registrations"] == "")
                    #expect(partial["schedules"] == "")
                    #expect(partial["geofences"] == (try await Self.shown(source))["geofences"])

                    failing.withLock { $0 = false }
                    let (rerun, rerunOut, rerunErr) = try await DeviceTransferCommandTests.herald(arguments)
                    #expect(rerun == 0, "\(rerunOut)\n\(rerunErr)")
                    #expect(rerunOut.contains("devices: 64 created, 0 updated, 0 unchanged"), "\(rerunOut)")
                    #expect(rerunOut.contains("geofences: 0 created, 2 unchanged"))
                    #expect(rerunOut.contains("schedules: 2 created, 0 unchanged"))
                    #expect(try await Self.shown(target) == (try await Self.shown(source)))
                }
            }
        }
    }
}
