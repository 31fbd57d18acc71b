import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite struct BadInputTests {
    /// Each malformed registration names its field, answers 400, and changes nothing.
    @Test(arguments: Backend.available)
    func malformedRegistrationsAreRefusedWithTheField(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let tooMany = (0...1024).map { "\"t\($0)\"" }.joined(separator: ",")
            let cases: [(body: String, field: String?, code: String)] = [
                ("{not json", nil, "invalid_json"),
                ("[]", nil, "invalid_type"),
                ("\"text\"", nil, "invalid_type"),
                (#"{"registration_token":42}"#, "registration_token", "invalid_type"),
                (#"{"registration_token":"abcd","os":7}"#, "os", "invalid_type"),
                (#"{"registration_token":"abcd","tags":"news"}"#, "tags", "invalid_type"),
                (#"{"registration_token":"abcd","tags":[1,2]}"#, "tags[0]", "invalid_type"),
                (#"{"registration_token":"abcd","tags":{"subscribe":"x"}}"#, "tags.subscribe", "invalid_type"),
                (#"{"registration_token":"abcd","os":"symbian"}"#, "os", "invalid_platform"),
                (#"{"registration_token":"abcd","os":"windowsPhone"}"#, "os", "platform_retired"),
                (#"{"os":"ios"}"#, "registration_token", "missing_field"),
                (#"{"registration_token":"xyz1"}"#, "registration_token", "invalid_token"),
                (#"{"registration_token":"abc"}"#, "registration_token", "invalid_token"),
                (#"{"registration_token":""}"#, "registration_token", "invalid_token"),
                (#"{"registration_token":"abcd","tags":[\#(tooMany)]}"#, "tags", "limit_exceeded"),
                (#"{"registration_token":"abcd","tags":["ok","\#(String(repeating: "x", count: 256))"]}"#, "tags[1]", "limit_exceeded"),
                (#"{"registration_token":"abcd","tags":[""]}"#, "tags[0]", "invalid_field"),
                (
                    #"{"registration_token":"abcd","custom_user_id":"\#(String(repeating: "u", count: 256))"}"#, "custom_user_id",
                    "invalid_field"
                ),
                (
                    #"{"registration_token":"abcd","device_alias":"\#(String(repeating: "a", count: 256))"}"#, "device_alias",
                    "invalid_field"
                ),
                // PostgreSQL cannot store a NUL in text: refused alike on both backends.
                (#"{"registration_token":"abcd","device_alias":"a\u0000b"}"#, "device_alias", "invalid_field"),
                (#"{"registration_token":"abcd","tags":["ok","x\u0000"]}"#, "tags[1]", "invalid_field"),
            ]
            for (json, field, code) in cases {
                let response = try await client.execute(uri: "/v1/registration", method: .post, headers: basic(fixture), body: body(json))
                #expect(response.status == .badRequest, "\(json.prefix(60))")
                let error = try response.error()
                #expect(error["field"] as? String == field, "\(json.prefix(60))")
                #expect(error["code"] as? String == code, "\(json.prefix(60))")
                #expect((error["message"] as? String)?.isEmpty == false)
            }
            // Another platform's device is not what these credentials may register: 403.
            let mismatch = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"abcd","os":"android"}"#))
            #expect(mismatch.status == .forbidden)
            #expect(try mismatch.error()["code"] as? String == "platform_mismatch")
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 0)

            // The same on an update: the device is left as it was.
            let post = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"abcd","tags":["keep"]}"#))
            let uuid = try #require(try post.json()["device_uuid"] as? String)
            for (json, _, _) in cases where !json.contains(#""os":"ios"}"#) {
                let response = try await client.execute(
                    uri: "/v1/registration/\(uuid)", method: .put, headers: basic(fixture), body: body(json))
                #expect(response.status == .badRequest, "\(json.prefix(60))")
            }
            let device = try #require(try await harness.store.devices.find(platformID: fixture.platform.id, uuid: UUID(uuidString: uuid)!))
            #expect(device.tags == ["keep"])
            #expect(device.registrationToken == "abcd")
        }
    }

    @Test func aBodyOverOneMebibyteIs413() async throws {
        try await ServerHarness.run(.sqlite) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let huge = #"{"registration_token":"abcd","device_alias":""# + String(repeating: "a", count: Limits.requestBodyBytes) + #""}"#
            let response = try await client.execute(uri: "/v1/registration", method: .post, headers: basic(fixture), body: body(huge))
            #expect(response.status == .contentTooLarge)
            #expect(try response.error()["code"] as? String == "body_too_large")
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 0)
        }
    }

    /// Throws a corpus of broken requests at every route: none may answer 5xx, and every
    /// error answer is the JSON error shape.
    @Test(arguments: Backend.available)
    func noBrokenRequestMakesTheServerFail(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let post = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture), body: body(#"{"registration_token":"abcd"}"#))
            let device = try #require(try post.json()["device_uuid"] as? String)
            let app = fixture.app.id.uuidString
            let platform = fixture.platform.id.uuidString
            let tenant = fixture.app.tenantID.uuidString
            let routes: [(HTTPRequest.Method, String)] = [
                (.post, "/v1/registration"), (.put, "/v1/registration/\(device)"), (.get, "/v1/registration/\(device)"),
                (.delete, "/v1/registration/\(UUID())"), (.get, "/v1/registration/count"), (.put, "/v1/registration/not-a-uuid"),
                (.get, "/v2/registrations?size=%ZZ&page=99999999999999999999"), (.get, "/v2/registrations?q=%00"),
                (.get, "/v1/version"), (.post, "/v1/push"),
                (.post, "/admin/v1/tenants"), (.get, "/admin/v1/tenants"), (.put, "/admin/v1/tenants/\(tenant)"),
                (.get, "/admin/v1/tenants/bad"), (.post, "/admin/v1/tenants/\(tenant)/tokens"),
                (.post, "/admin/v1/apps"), (.put, "/admin/v1/apps/\(app)"), (.get, "/admin/v1/apps/\(app)/devices?size=1000"),
                (.post, "/admin/v1/apps/\(app)/platforms"), (.put, "/admin/v1/platforms/\(platform)"),
                (.post, "/admin/v1/platforms/\(UUID())/secret"), (.delete, "/admin/v1/apps/zzz"), (.patch, "/v1/registration"),
                (.get, "/nowhere"),
            ]
            let bodies: [String?] = [
                nil, "", "{", "null", "[]", "0", "\"s\"", #"{"a":}"#, "{\"\u{0}\":1}",
                #"{"name":{"x":1},"type":[],"credentials":"x","tenant_id":5,"registration_token":null,"tags":{"subscribe":[null]}}"#,
                #"{"name":"","type":"bb10","credentials":{"p8":"x","p12":"y"},"description":7}"#,
                #"{"type":"ios","credentials":{"p12":"AAAA","password":"x","topic":"t"}}"#,
                #"{"type":"android","credentials":{"service_account":{"type":"service_account"}}}"#,
                #"{"type":"web","credentials":{"subject":"mailto:a@b","vapid_private_key":"!!"}}"#,
                #"{"registration_token":"\#(String(repeating: "f", count: 5000))"}"#,
                #"{"message":{"body":"x"},"target":{"custom_user_ids":["a\u0000"],"topics":["b\u0000"]}}"#,
                String(repeating: "[", count: 10_000),
            ]
            let credentials: [HTTPFields] = [basic(fixture), appAuth(fixture), bearer(harness.adminToken), [:], [.authorization: "Basic"]]
            var count = 0
            for (method, uri) in routes {
                for payload in bodies {
                    for headers in credentials {
                        let response = try await client.execute(
                            uri: uri, method: method, headers: headers, body: payload.map { ByteBuffer(string: $0) })
                        count += 1
                        #expect(response.status.code < 500, "\(method) \(uri) \(payload?.prefix(40) ?? "nil") → \(response.status)")
                        if response.status.code >= 400 {
                            #expect(throws: Never.self, "\(method) \(uri)") { _ = try response.error() }
                        }
                    }
                }
            }
            #expect(count == routes.count * bodies.count * credentials.count)
        }
    }
}
