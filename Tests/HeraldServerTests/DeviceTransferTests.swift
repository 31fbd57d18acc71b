import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `GET /admin/v1/apps/:app/devices/export` and `POST …/import`: devices both ways, as NDJSON.
@Suite struct DeviceTransferTests {
    static let appUUID = "7d1c9a52-0b3e-4f6a-9c8d-1e2f3a4b5c6d"
    static let apiKey = "kept-api-key-0123456789"
    static let iosUUID = "0f9e8d7c-6b5a-4948-8372-615f4e3d2c1b"
    static let androidUUID = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
    static let secret = "kept-platform-secret-0123"

    /// The application and its two platforms with kept identities, on a server.
    static func makeApp(_ client: any TestClientProtocol, _ root: HTTPFields) async throws {
        let app = try await client.execute(
            uri: "/admin/v1/apps", method: .post, headers: root,
            body: body(#"{"name":"Moved","uuid":"\#(appUUID)","api_key":"\#(apiKey)","verify_custom_user_id":false}"#))
        #expect(app.status == .created)
        for (type, uuid) in [("ios", iosUUID), ("android", androidUUID)] {
            let platform = try await client.execute(
                uri: "/admin/v1/apps/\(appUUID)/platforms", method: .post, headers: root,
                body: body(#"{"type":"\#(type)","uuid":"\#(uuid)","secret":"\#(secret)"}"#))
            #expect(platform.status == .created)
        }
    }

    static func export(_ client: any TestClientProtocol, _ root: HTTPFields) async throws -> String {
        let response = try await client.execute(uri: "/admin/v1/apps/\(appUUID)/devices/export", method: .get, headers: root)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "application/x-ndjson")
        return String(buffer: response.body)
    }

    static func importing(_ client: any TestClientProtocol, _ root: HTTPFields, _ ndjson: String) async throws -> [String: Any] {
        let response = try await client.execute(
            uri: "/admin/v1/apps/\(appUUID)/devices/import", method: .post, headers: root, body: ByteBuffer(string: ndjson))
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.json()
    }

    @Test(arguments: Backend.available)
    func exportThenImportRoundTripsExactly(_ backend: Backend) async throws {
        let pageOverflow = 2001 + 5  // more than one export page
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            try await Self.makeApp(client, root)
            // Devices as SDKs register them: tags, custom user ids, a time zone…
            let ios = basic(Self.iosUUID, Self.secret)
            for index in 0..<3 {
                // One with a quiet time of its own (issue 19), which the export carries.
                let quiet = index == 1 ? #","quiet_time":{"start":"22:00","end":"07:00"}"# : ""
                let response = try await client.execute(
                    uri: "/v1/registration", method: .post, headers: ios,
                    body: body(
                        #"{"os":"ios","os_version":"17.\#(index)","device_alias":"phone \"\#(index)\"","device_model":"iPhone15,2","device_manufacturer":"Apple","registration_token":"\#(String(repeating: "ab", count: 31))\#(index)0","custom_user_id":"user-\#(index)","tags":["News","sport","ünïcode"],"time_zone":"Europe/Paris"\#(quiet),"badge":\#(index + 4)}"#
                    ))
                #expect(response.status == .ok)
            }
            // …and, through an import, an inactive device and a bare one, then many more.
            var lines = [
                #"{"device_uuid":"9b2f6c1e-2d3a-4b5c-8d7e-6f5a4b3c2d1e","platform_uuid":"\#(Self.androidUUID)","os":"android-fcm","registration_token":"fcm:inactive-token","tags":[],"active":false,"created_at":1600000000000,"updated_at":1600000001000}"#,
                #"{"device_uuid":"8a1e5b0d-1c29-4a4b-9c6d-5e4f3a2b1c0d","platform_uuid":"\#(Self.androidUUID)","registration_token":"bare-token"}"#,
            ]
            for index in 0..<pageOverflow {
                lines.append(
                    #"{"device_uuid":"\#(UUID().uuidString)","platform_uuid":"\#(Self.androidUUID)","registration_token":"bulk-\#(index)","tags":["bulk"],"custom_user_id":"bulk-user"}"#
                )
            }
            let report = try await Self.importing(client, root, lines.joined(separator: "\n") + "\n")
            #expect(report["imported"] as? Int == lines.count)
            #expect(report["rejected"] as? Int == 0)
            try await Self.checkRoundTrip(backend, exported: try await Self.export(client, root), pageOverflow: pageOverflow)
        }
    }

    /// Imports `exported` into a second, empty server and checks it exports the same bytes.
    static func checkRoundTrip(_ backend: Backend, exported: String, pageOverflow: Int) async throws {
        let lines = exported.split(separator: "\n")
        #expect(lines.count == 3 + 2 + pageOverflow)
        let inactive = try #require(lines.first { $0.contains("inactive-token") })
        #expect(inactive.contains(#""active":false"#))
        #expect(inactive.contains(#""created_at":1600000000000,"updated_at":1600000001000"#))
        let registered = try #require(lines.first { $0.contains("user-1") })
        #expect(registered.contains(#""tags":["news","sport","ünïcode"]"#))
        #expect(registered.contains(#""time_zone":"Europe/Paris","quiet_time":{"start":"22:00","end":"07:00"}"#))
        #expect(!exported.contains(#""quiet_time":null"#))
        #expect(registered.contains(#""device_alias":"phone \"1\"""#))
        // The autobadge count travels too (absent on an imported line: 0).
        #expect(registered.hasSuffix(#","badge":5}"#))
        #expect(inactive.hasSuffix(#","badge":0}"#))

        // A second, empty server: the same identities, then the export imported: the same devices.
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            try await Self.makeApp(client, root)
            let report = try await Self.importing(client, root, exported)
            #expect(report["imported"] as? Int == lines.count)
            #expect(report["updated"] as? Int == 0)
            #expect(report["rejected"] as? Int == 0)
            #expect(try await Self.export(client, root) == exported)

            // Again: nothing changes (every device updated to what it was).
            let again = try await Self.importing(client, root, exported)
            #expect(again["imported"] as? Int == 0)
            #expect(again["updated"] as? Int == lines.count)
            #expect(try await Self.export(client, root) == exported)

            // What the SDKs do after the move: PUT to the uuid they saved, with the old credentials.
            let uuid = try #require(registered.split(separator: "\"")[3...].first.map(String.init))
            let put = try await client.execute(
                uri: "/v1/registration/\(uuid)", method: .put, headers: basic(Self.iosUUID, Self.secret),
                body: body(#"{"os_version":"18.0","tags":{"subscribe":["moved"]}}"#))
            #expect(put.status == .ok)
            #expect(try put.json()["device_uuid"] as? String == uuid)
            let read = try await client.execute(uri: "/v1/registration/\(uuid)", method: .get, headers: basic(Self.iosUUID, Self.secret))
            #expect(try read.json()["os_version"] as? String == "18.0")
            #expect(try read.json()["custom_user_id"] as? String == "user-1")
            // The topics came with the tags.
            let androidID = try #require(UUID(text: Self.androidUUID))
            #expect(try await harness.store.devices.count(platformID: androidID) == 2 + pageOverflow)
        }
    }

    @Test(arguments: Backend.available)
    func badLinesAreRejectedOneByOneAndNothingMoves(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            try await Self.makeApp(client, root)
            // Another tenant's application, with a device whose uuid a line claims.
            let other = try await Fixture.make(harness.store, type: .android)
            let register = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(other), body: body(#"{"registration_token":"other-token"}"#))
            let othersUUID = try #require(try register.json()["device_uuid"] as? String)
            // A device of this app holding a token that a line gives to another uuid.
            let holder = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(Self.androidUUID, Self.secret),
                body: body(#"{"registration_token":"held-token"}"#))
            #expect(holder.status == .ok)

            let good = "11111111-1111-4111-8111-111111111111"
            let android = Self.androidUUID
            let lines = [
                #"{"device_uuid":"\#(good)","platform_uuid":"\#(android)","registration_token":"good-1","tags":["a"]}"#,  // 1
                #"not json"#,  // 2
                // 3
                #"{"device_uuid":"22222222-2222-4222-8222-222222222222","platform_uuid":"33333333-3333-4333-8333-333333333333","registration_token":"t"}"#,
                // 4
                #"{"device_uuid":"44444444-4444-4444-8444-444444444444","platform_uuid":"\#(Self.iosUUID)","registration_token":"not hex"}"#,
                #"{"device_uuid":"\#(good)","platform_uuid":"\#(android)","registration_token":"good-again"}"#,  // 5
                #"{"platform_uuid":"\#(android)","registration_token":"no-uuid"}"#,  // 6
                // 7
                #"{"device_uuid":"55555555-5555-4555-8555-555555555555","platform_uuid":"\#(android)","registration_token":"t5","tags":[""]}"#,
                // 8
                #"{"device_uuid":"66666666-6666-4666-8666-666666666666","platform_uuid":"\#(Self.iosUUID)","os":"android","registration_token":"abcd"}"#,
                #"{"device_uuid":"\#(othersUUID)","platform_uuid":"\#(android)","registration_token":"stolen"}"#,  // 9
                // 10
                #"{"device_uuid":"77777777-7777-4777-8777-777777777777","platform_uuid":"\#(android)","registration_token":"held-token"}"#,
                "   ",  // 11: blank, skipped
                // 12
                #"{"device_uuid":"88888888-8888-4888-8888-888888888888","platform_uuid":"\#(android)","registration_token":"x","active":"yes"}"#,
                // 13
                #"{"device_uuid":"12121212-1212-4121-8121-121212121212","platform_uuid":"\#(android)","registration_token":"b","badge":-1}"#,
                // 14, no \n
                #"{"device_uuid":"99999999-9999-4999-8999-999999999999","platform_uuid":"\#(Self.iosUUID)","registration_token":"ABCDEF"}"#,
            ]
            let report = try await Self.importing(client, root, lines.joined(separator: "\n"))
            #expect(report["lines"] as? Int == 14)
            #expect(report["imported"] as? Int == 2)
            #expect(report["updated"] as? Int == 0)
            #expect(report["rejected"] as? Int == 11)
            let rejections = try #require(report["rejections"] as? [[String: Any]])
            let byLine = Dictionary(uniqueKeysWithValues: rejections.map { ($0["line"] as? Int ?? 0, $0) })
            let expected: [Int: (String, String?)] = [
                2: ("invalid_json", nil), 3: ("unknown_platform", "platform_uuid"), 4: ("invalid_token", "registration_token"),
                5: ("duplicate", "device_uuid"), 6: ("missing_field", "device_uuid"), 7: ("invalid_field", "tags[0]"),
                8: ("platform_mismatch", "os"), 9: ("conflict", "device_uuid"), 10: ("conflict", "registration_token"),
                12: ("invalid_type", "active"), 13: ("invalid_type", "badge"),
            ]
            #expect(Set(byLine.keys) == Set(expected.keys))
            for (line, (code, field)) in expected {
                #expect(byLine[line]?["code"] as? String == code, "line \(line): \(byLine[line] ?? [:])")
                #expect(byLine[line]?["field"] as? String == field, "line \(line)")
            }
            // The good lines were written whole; the other tenant's device did not move.
            let platformID = try #require(UUID(text: android))
            let goodID = try #require(UUID(text: good))
            let written = try #require(try await harness.store.devices.find(platformID: platformID, uuid: goodID))
            #expect(written.registrationToken == "good-1")
            #expect(written.tags == ["a"])
            let iosID = try #require(UUID(text: Self.iosUUID))
            let lastID = try #require(UUID(text: "99999999-9999-4999-8999-999999999999"))
            #expect(try await harness.store.devices.find(platformID: iosID, uuid: lastID)?.registrationToken == "abcdef")
            let othersID = try #require(UUID(text: othersUUID))
            let stillThere = try #require(try await harness.store.devices.find(platformID: other.platform.id, uuid: othersID))
            #expect(stillThere.registrationToken == "other-token")
            #expect(try await harness.store.devices.count(platformID: platformID) == 2)
        }
    }

    /// Tokens are checked against the devices stored before the chunk, on both databases: a
    /// chunk that gives the holder of a token a new one and then gives that token to another
    /// uuid refuses the second line (the import never moves a token to another device), the
    /// first is written.
    @Test(arguments: Backend.available)
    func aTokenIsNotMovedWithinAChunk(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            try await Self.makeApp(client, root)
            let holder = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(Self.androidUUID, Self.secret),
                body: body(#"{"registration_token":"held-token"}"#))
            let holderUUID = try #require(try holder.json()["device_uuid"] as? String)
            let newcomer = "abababab-abab-4bab-8bab-abababababab"
            let lines = [
                #"{"device_uuid":"\#(holderUUID)","platform_uuid":"\#(Self.androidUUID)","registration_token":"new-token"}"#,
                #"{"device_uuid":"\#(newcomer)","platform_uuid":"\#(Self.androidUUID)","registration_token":"held-token"}"#,
            ]
            let report = try await Self.importing(client, root, lines.joined(separator: "\n"))
            #expect(report["updated"] as? Int == 1)
            #expect(report["imported"] as? Int == 0)
            let rejections = try #require(report["rejections"] as? [[String: Any]])
            #expect(rejections.count == 1)
            #expect(rejections.first?["line"] as? Int == 2)
            #expect(rejections.first?["code"] as? String == "conflict")
            #expect(rejections.first?["field"] as? String == "registration_token")
            let platformID = try #require(UUID(text: Self.androidUUID))
            let holderID = try #require(UUID(text: holderUUID))
            #expect(try await harness.store.devices.find(platformID: platformID, uuid: holderID)?.registrationToken == "new-token")
            #expect(try await harness.store.devices.find(platformID: platformID, uuid: try #require(UUID(text: newcomer))) == nil)
        }
    }

    /// The body streams: chunked, cut anywhere (inside lines), up to the server's maximum.
    @Test(arguments: Backend.available)
    func chunkedImportsStreamAndTheMaximumHolds(_ backend: Backend) async throws {
        var limits = DeviceImportConfiguration()
        limits.maximumBytes = 4000
        limits.devicesPerTransaction = 7
        try await ServerHarness.run(backend, setup: .live, deviceImport: limits) { harness, client in
            let root = bearer(harness.adminToken)
            try await Self.makeApp(client, root)
            let port = try #require(client.port)
            func send(_ text: String, pieces: Int) async throws -> (HTTPResponse.Status, [String: Any]) {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/admin/v1/apps/\(Self.appUUID)/devices/import")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(harness.adminToken)")
                let bytes = Array(text.utf8)
                let size = max(1, bytes.count / pieces)
                let parts = stride(from: 0, to: bytes.count, by: size).map { ByteBuffer(bytes: bytes[$0..<min($0 + size, bytes.count)]) }
                request.body = .stream(parts.async, length: .unknown)
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                let data = try await response.body.collect(upTo: 1 << 20)
                let json = try JSONSerialization.jsonObject(with: Data(data.readableBytesView)) as? [String: Any] ?? [:]
                return (HTTPResponse.Status(code: Int(response.status.code)), json)
            }
            let lines = (0..<20).map {
                #"{"device_uuid":"\#(UUID().uuidString)","platform_uuid":"\#(Self.androidUUID)","registration_token":"chunked-\#($0)"}"#
            }
            let (status, report) = try await send(lines.joined(separator: "\r\n"), pieces: 37)
            #expect(status == .ok)
            #expect(report["imported"] as? Int == 20)
            let platformID = try #require(UUID(text: Self.androidUUID))
            #expect(try await harness.store.devices.count(platformID: platformID) == 20)

            // Over the maximum: 413, saying what was written before it stopped.
            let many = (0..<60).map {
                #"{"device_uuid":"\#(UUID().uuidString)","platform_uuid":"\#(Self.androidUUID)","registration_token":"over-\#($0)"}"#
            }
            let (tooLarge, answer) = try await send(many.joined(separator: "\n"), pieces: 30)
            #expect(tooLarge == .contentTooLarge)
            let message = try #require((answer["error"] as? [String: Any])?["message"] as? String)
            #expect(message.contains("imported"))
            let after = try await harness.store.devices.count(platformID: platformID)
            #expect(message.contains("\(after - 20) imported"))
        }
    }

    @Test(arguments: Backend.available)
    func anotherTenantCannotExportOrImport(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            try await Self.makeApp(client, root)
            let tenant = try #require(
                try await client.execute(
                    uri: "/admin/v1/tenants", method: .post, headers: root, body: body(#"{"name":"other"}"#)
                ).json()["id"] as? String)
            let token = try #require(
                try await client.execute(
                    uri: "/admin/v1/tenants/\(tenant)/tokens", method: .post, headers: root, body: body(#"{"name":"t"}"#)
                ).json()["token"] as? String)
            let export = try await client.execute(
                uri: "/admin/v1/apps/\(Self.appUUID)/devices/export", method: .get, headers: bearer(token))
            #expect(export.status == .notFound)
            let imported = try await client.execute(
                uri: "/admin/v1/apps/\(Self.appUUID)/devices/import", method: .post, headers: bearer(token),
                body: body(#"{"device_uuid":"\#(UUID().uuidString)","platform_uuid":"\#(Self.androidUUID)","registration_token":"x"}"#))
            #expect(imported.status == .notFound)
            #expect(
                try await client.execute(uri: "/admin/v1/apps/\(Self.appUUID)/devices/export", method: .get, headers: [:]).status
                    == .unauthorized)
            // A body without a line is refused.
            let empty = try await client.execute(
                uri: "/admin/v1/apps/\(Self.appUUID)/devices/import", method: .post, headers: root, body: body("\n  \n"))
            #expect(empty.status == .badRequest)
        }
    }
}
