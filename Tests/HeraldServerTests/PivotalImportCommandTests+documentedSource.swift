import Foundation
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Testing

/// A Pivotal server answering exactly as Pivotal's API documentation shows (the API seed):
/// registrations without tags, custom user ids or platform; `q` matching the device uuid,
/// token, custom user id or alias; schedules listing every platform key under `custom`, the
/// unused ones `null`, and `"scheduleIn": 0` beside `scheduleAt`. Its second page of Android
/// devices fails transiently (503) twice, or always under `/down`.
final class DocumentedPivotalSource: Sendable {
    struct Device: Sendable {
        var uuid: String
        var platform: String
        var os: String
        var osVersion: String
        var alias: String
        var token: String
        var customUserID: String?
        var topics: [String]
    }

    static let scheduleID = "fc226fbc1443ebfe"
    let devices: Mutex<[Device]>
    let scheduledFor: Int64
    /// Requests for the failing page, answered 503 while fewer than `transientFailures`.
    let failingPageRequests = Mutex(0)
    let transientFailures = 2

    init(now: Int64) {
        scheduledFor = now + 86_400_000
        var devices: [Device] = []
        // Upper-case APNs tokens, as Pivotal keeps them; "bob" is in "bobby".
        for (index, id) in ["bob", "bobby", nil].enumerated() {
            devices.append(
                Device(
                    uuid: String(format: "00000000-0000-4000-8000-1%011d", index), platform: PivotalImportCommandTests.iosUUID, os: "ios",
                    osVersion: "17.\(index)", alias: "phone \(index)",
                    token: String(repeating: "AB", count: 31) + String(format: "%02d", index),
                    customUserID: id, topics: index < 2 ? ["news"] : []))
        }
        // 57 Android devices over two pages; "member-3" is in "member-33"; "cafe" is also in
        // an alias and "fcm" in every token, so neither can be told apart.
        for index in 0..<57 {
            let id: String? = index % 3 == 0 ? "member-\(index)" : index == 1 ? "cafe" : index == 2 ? "fcm" : nil
            devices.append(
                Device(
                    uuid: String(format: "00000000-0000-4000-8000-2%011d", index), platform: PivotalImportCommandTests.androidUUID,
                    os: "android", osVersion: "14", alias: index == 1 ? "cafe owner" : "android \(index)", token: "fcm-token-\(index)",
                    customUserID: id, topics: index % 2 == 0 ? ["news"] : []))
        }
        self.devices = Mutex(devices)
    }

    var customUserIDs: [String] { devices.withLock { $0.compactMap(\.customUserID) } }

    /// A registration as `GET /v2/registrations` documents it.
    private static func row(_ device: Device) -> [String: Any] {
        [
            "os": device.os, "os_version": device.osVersion, "device_model": "Model", "device_manufacturer": "Maker",
            "device_alias": device.alias, "device_uuid": device.uuid, "registration_token": device.token, "active": true,
        ]
    }

    /// The push of the seed's `GET /v1/schedules` example.
    var schedules: [[String: Any]] {
        [
            [
                "schedule_id": Self.scheduleID, "scheduled_for": scheduledFor,
                "push": [
                    "scheduleAt": scheduledFor, "scheduleIn": 0, "expiryTime": NSNull(),
                    "message": [
                        "custom": [
                            "windows8": NSNull(), "windowsPhone": NSNull(), "bb10": NSNull(), "android": NSNull(),
                            "ios": [
                                "alert": ["body": "Sale", "title": "Offers"], "badge": 0, "sound": "default", "content-available": false,
                            ],
                        ] as [String: Any],
                        "body": "Sale",
                    ] as [String: Any],
                    "target": ["topics": ["news"], "platforms": ["ios", "android"], "interactive-only": false] as [String: Any],
                ] as [String: Any],
            ]
        ]
    }

    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("**") { request, _ -> Response in
            var path = request.uri.path
            let down = path.hasPrefix("/down/")
            if down { path.removeFirst("/down".count) }
            var query: [String: String] = [:]
            for item in URLComponents(string: request.uri.description)?.queryItems ?? [] { query[item.name] = item.value ?? "" }
            return try self.answer(path, query, down: down)
        }
    }

    private func answer(_ path: String, _ query: [String: String], down: Bool) throws -> Response {
        func json(_ value: Any) throws -> Response {
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: value))))
        }
        func paged(_ key: String, _ total: String, _ items: [Any]) throws -> Response {
            let size = Int(query["size"] ?? "20") ?? 20
            let page = Int(query["page"] ?? "1") ?? 1
            let slice = items.dropFirst((page - 1) * size).prefix(size)
            return try json([
                key: Array(slice), total: items.count, "totalPages": max(1, (items.count + size - 1) / size), "page": page, "size": size,
            ])
        }
        switch path {
        case "/v2/registrations":
            if query["platformUuid"] == PivotalImportCommandTests.androidUUID, query["page"] == "2" {
                let failures = failingPageRequests.withLock { count in
                    count += 1
                    return count
                }
                if down || failures <= transientFailures {
                    return Response(status: .serviceUnavailable, body: .init(byteBuffer: ByteBuffer(string: "try later")))
                }
            }
            var devices = self.devices.withLock { $0 }
            if let platform = query["platformUuid"] { devices = devices.filter { $0.platform == platform } }
            if let topic = query["topic"] { devices = devices.filter { $0.topics.contains(topic) } }
            if let q = query["q"]?.lowercased() {
                devices = devices.filter { device in
                    [device.uuid, device.token, device.customUserID ?? "", device.alias].contains { $0.lowercased().contains(q) }
                }
            }
            return try paged("registrations", "totalRegistrations", devices.map(Self.row))
        case "/v2/topics":
            return try paged("topics", "totalTopics", [["id": 1, "name": "news"], ["id": 2, "name": "sport"]])
        case "/v2/custom_user_ids":
            return try json(["custom_user_ids": customUserIDs])
        case "/v1/schedules":
            return try json(schedules)
        case "/v1/locations":
            return try paged("locations", "totalLocations", [])
        case "/v1/location_groups":
            return try paged("location_groups", "totalLocationGroups", [])
        case "/v1/geofence":
            return try paged("geofences", "totalGeofences", [])
        default:
            if path.hasPrefix("/v1/registration/"), let device = devices.withLock({ $0.first { path.hasSuffix($0.uuid) } }) {
                return try json(Self.row(device))
            }
            return Response(status: .notFound)
        }
    }
}

extension PivotalImportCommandTests {
    /// Issue 32, items 1 to 5, against a source shaped as Pivotal documents it: its schedule
    /// arrives with its id, a transient 5xx is retried, custom user ids come back where they can
    /// be told apart, a re-run is clean and keeps what the device changed on Herald, and a change
    /// at the source is applied; a source that stays down stops the import naming the page.
    @Test(arguments: Backend.available)
    func aSourceShapedAsPivotalDocumentsIsImportedAndRerunCleanly(_ backend: Backend) async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let pivotal = DocumentedPivotalSource(now: now)
        let router = Router()
        pivotal.addRoutes(to: router)
        let fake = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await fake.test(.live) { fakeClient in
            let fakePort = try #require(fakeClient.port)
            try await ServerHarness.run(backend, setup: .live) { targetHarness, target in
                let arguments =
                    Self.arguments(
                        from: "http://127.0.0.1:\(fakePort)", target: try #require(target.port), token: targetHarness.adminToken)
                    + ["--source-retry-wait-ms", "1"]
                let (status, out, err) = try await DeviceTransferCommandTests.herald(arguments)
                #expect(status == 0, "\(out)\n\(err)")
                // Item 4: the page failed twice and was read on the third request.
                #expect(pivotal.failingPageRequests.withLock { $0 } == 3)
                #expect(out.contains("devices: 60 created, 0 updated, 0 unchanged"), "\(out)")
                // Item 1: the schedule arrived, under Pivotal's id.
                #expect(out.contains("schedules: 1 created, 0 unchanged"), "\(out)")
                let schedule = try await target.execute(
                    uri: "/v1/schedules/\(DocumentedPivotalSource.scheduleID)", method: .get, headers: Self.appAuth)
                #expect(schedule.status == .ok, "\(String(buffer: schedule.body))")
                #expect(try schedule.json()["scheduled_for"] as? Int64 == pivotal.scheduledFor)
                // Item 5: custom user ids back where `q` tells them apart.
                #expect(out.contains("21 of the 23 listed by /v2/custom_user_ids were given back to their 21 devices"), "\(out)")
                #expect(out.contains("custom user ids: 2 of 23 could not be told apart"), "\(out)")
                let ids = try await Self.customUserIDs(target)
                #expect(ids["00000000-0000-4000-8000-100000000000"] == "bob")
                #expect(ids["00000000-0000-4000-8000-100000000001"] == "bobby")
                #expect(ids["00000000-0000-4000-8000-200000000003"] == "member-3")
                #expect(ids["00000000-0000-4000-8000-200000000033"] == "member-33")
                #expect(ids["00000000-0000-4000-8000-200000000001"] == nil, "cafe: also in its alias")
                #expect(ids["00000000-0000-4000-8000-200000000002"] == nil, "fcm: also in every token")
                #expect(ids.count == 21)

                // Item 3: a second run writes nothing (upper-case APNs tokens included) and says so.
                let (again, againOut, _) = try await DeviceTransferCommandTests.herald(arguments)
                #expect(again == 0)
                #expect(againOut.contains("Nothing changed"), "\(againOut)")
                #expect(againOut.contains("devices: 0 created, 0 updated, 60 unchanged"), "\(againOut)")
                #expect(againOut.contains("schedules: 0 created, 1 unchanged"), "\(againOut)")

                // Item 2: what a device did on Herald since stays: a re-run writes only what the
                // source changed since the previous one (its snapshots on the target).
                let device = "00000000-0000-4000-8000-100000000000"
                let put = try await target.execute(
                    uri: "/v1/registration/\(device)", method: .put, headers: basic(Self.iosUUID, Self.secret),
                    body: body(#"{"custom_user_id":"bond007","time_zone":"Europe/Paris","tags":{"subscribe":["offers"],"unsubscribe":[]}}"#)
                )
                #expect(put.status == .ok, "\(String(buffer: put.body))")
                let (third, thirdOut, _) = try await DeviceTransferCommandTests.herald(arguments)
                #expect(third == 0)
                #expect(thirdOut.contains("Nothing changed"), "\(thirdOut)")
                func exported() async throws -> [String: Any] {
                    let lines = try await DeviceTransferTests.export(target, bearer(targetHarness.adminToken))
                    let line = try #require(lines.split(separator: "\n").first { $0.contains(device) })
                    return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                }
                var line = try await exported()
                #expect(line["custom_user_id"] as? String == "bond007")
                #expect(Set(line["tags"] as? [String] ?? []) == ["news", "offers"])
                // A change at the source is applied, field by field and tag by tag, and the device's own stay.
                pivotal.devices.withLock { devices in
                    if let index = devices.firstIndex(where: { $0.uuid == device }) {
                        devices[index].osVersion = "18.2"
                        devices[index].topics.append("sport")
                    }
                }
                let (fourth, fourthOut, _) = try await DeviceTransferCommandTests.herald(arguments)
                #expect(fourth == 0)
                #expect(fourthOut.contains("devices: 0 created, 1 updated, 59 unchanged"), "\(fourthOut)")
                line = try await exported()
                #expect(line["os_version"] as? String == "18.2")
                #expect(line["custom_user_id"] as? String == "bond007")
                #expect(line["time_zone"] as? String == "Europe/Paris")
                #expect(Set(line["tags"] as? [String] ?? []) == ["news", "offers", "sport"])

                // Item 4: a page that keeps failing stops the import, naming it; nothing is written.
                let down =
                    Self.arguments(
                        from: "http://127.0.0.1:\(fakePort)/down", target: try #require(target.port), token: targetHarness.adminToken)
                    + ["--source-retries", "2", "--source-retry-wait-ms", "1"]
                let (failed, failedOut, _) = try await DeviceTransferCommandTests.herald(down)
                #expect(failed == 1)
                #expect(
                    failedOut.contains(
                        "Import stopped: the source answered 503 to GET /v2/registrations?platformUuid=\(Self.androidUUID)&size=50&page=2, with 'try later' (asked 3 times)"
                    ),
                    "\(failedOut)")
                #expect(failedOut.contains("Nothing was written to the target."))

                // Item 1, the server side: Pivotal's push shape is accepted by /v1/push.
                let push = try JSONSerialization.data(withJSONObject: try #require(pivotal.schedules.first?["push"]))
                let sent = try await target.execute(uri: "/v1/push", method: .post, headers: Self.appAuth, body: ByteBuffer(bytes: push))
                #expect(sent.status == .ok, "\(String(buffer: sent.body))")
                #expect(try sent.json()["schedule_id"] is String)
                #expect(
                    try await target.execute(
                        uri: "/v1/schedules/\(DocumentedPivotalSource.scheduleID)", method: .delete, headers: Self.appAuth
                    ).status == .noContent)
            }
        }
    }

    /// Each device's custom user id on `client`, by device uuid (those with one).
    static func customUserIDs(_ client: any TestClientProtocol) async throws -> [String: String] {
        var ids: [String: String] = [:]
        var page = 1
        while true {
            let answer = try await client.execute(uri: "/v2/registrations?size=50&page=\(page)", method: .get, headers: appAuth).json()
            for device in answer["registrations"] as? [[String: Any]] ?? [] {
                if let uuid = device["device_uuid"] as? String, let id = device["custom_user_id"] as? String { ids[uuid] = id }
            }
            guard page < (answer["totalPages"] as? Int ?? 1) else { return ids }
            page += 1
        }
    }
}
