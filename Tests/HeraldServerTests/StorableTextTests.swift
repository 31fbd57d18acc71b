import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A NUL character cannot be stored faithfully by either backend (PostgreSQL refuses it in text,
/// SQLite reads it back cut): every text input refuses it with a 400 naming the field, and stores
/// nothing; every other control character is stored as sent.
@Suite struct StorableTextTests {
    @Test(arguments: Backend.available)
    func aNULInAnyBodyFieldIsA400NamingIt(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let root = bearer(harness.adminToken)
            let app = fixture.app.id.uuidString.lowercased()
            let platform = fixture.platform.id.uuidString.lowercased()
            let tenant = fixture.app.tenantID.uuidString.lowercased()
            let tenantsBefore = try await harness.store.tenants.list().count
            let cases: [(HTTPRequest.Method, String, HTTPFields, String, String)] = [
                (.post, "/admin/v1/tenants", root, #"{"name":"a\u0000b"}"#, "name"),
                (.put, "/admin/v1/tenants/\(tenant)", root, #"{"name":"a\u0000b"}"#, "name"),
                (.post, "/admin/v1/tenants/\(tenant)/tokens", root, #"{"name":"a\u0000b"}"#, "name"),
                (.post, "/admin/v1/apps", root, #"{"name":"a\u0000b"}"#, "name"),
                (.post, "/admin/v1/apps", root, #"{"name":"ok","description":"\u0000"}"#, "description"),
                (.put, "/admin/v1/apps/\(app)", root, #"{"name":"a\u0000b"}"#, "name"),
                (.put, "/admin/v1/apps/\(app)", root, #"{"description":"d\u0000"}"#, "description"),
                (.post, "/admin/v1/apps/\(app)/platforms", root, #"{"type":"web","name":"w\u0000","credentials":{}}"#, "name"),
                (
                    .post, "/admin/v1/apps/\(app)/platforms", root,
                    #"{"type":"web","credentials":{"subject":"mailto:a@b\u0000"}}"#, "credentials.subject"
                ),
                (.put, "/admin/v1/platforms/\(platform)", root, #"{"name":"p\u0000"}"#, "name"),
                (.put, "/admin/v1/apps/\(app)/delivery", root, #"{"proxy":"http://a\u0000b:1"}"#, "proxy"),
                (.post, "/v1/registration", basic(fixture), #"{"registration_token":"abcd","os_version":"1\u0000"}"#, "os_version"),
                (.post, "/v1/registration", basic(fixture), #"{"registration_token":"abcd","device_model":"m\u0000"}"#, "device_model"),
                (.post, "/v1/registration", basic(fixture), #"{"registration_token":"abcd","locale":"en\u0000"}"#, "locale"),
                (.post, "/v2/topics", appAuth(fixture), #"{"name":"t\u0000"}"#, "name"),
                (.post, "/v1/push", appAuth(fixture), #"{"message":{"body":"b\u0000"}}"#, "message.body"),
                (
                    .post, "/v1/push", appAuth(fixture), #"{"message":{"body":"b","custom":{"android":{"k\u0000":"v"}}}}"#,
                    "message.custom.android.k\u{0}"
                ),
                (
                    .post, "/v1/locations", appAuth(fixture), #"{"name":"n","description":"\u0000","lat":1,"long":1,"rad":10}"#,
                    "description"
                ),
                (
                    .post, "/v1/analytics", basic(fixture), #"{"events":[{"eventType":"x","eventTime":"1","receiptId":"\u0000"}]}"#,
                    "events[0].receiptId"
                ),
            ]
            for (method, uri, headers, json, field) in cases {
                let response = try await client.execute(uri: uri, method: method, headers: headers, body: body(json))
                #expect(response.status == .badRequest, "\(method) \(uri) \(json)")
                #expect(try response.error()["field"] as? String == field, "\(method) \(uri) \(json)")
            }
            #expect(try await harness.store.tenants.list().count == tenantsBefore)
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 0)
            let unchanged = try await client.execute(uri: "/admin/v1/apps/\(app)", method: .get, headers: root)
            #expect(try unchanged.json()["name"] as? String == "App")
        }
    }

    @Test(arguments: Backend.available)
    func aNULInAQueryParameterIsA400NamingIt(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let app = fixture.app.id.uuidString.lowercased()
            let cases: [(String, HTTPFields, String)] = [
                ("/v2/registrations?topic=a%00b", appAuth(fixture), "topic"),
                ("/v2/registrations?q=%00", appAuth(fixture), "q"),
                ("/v2/custom_user_ids?q=a%00", appAuth(fixture), "q"),
                ("/v2/topics?q=a%00", appAuth(fixture), "q"),
                ("/v1/locations?q=%00", appAuth(fixture), "q"),
                ("/admin/v1/apps/\(app)/devices?topic=a%00b", bearer(harness.adminToken), "topic"),
                ("/admin/v1/apps/\(app)/devices?tag=%00", bearer(harness.adminToken), "tag"),
            ]
            for (uri, headers, field) in cases {
                let response = try await client.execute(uri: uri, method: .get, headers: headers)
                #expect(response.status == .badRequest, "\(uri)")
                #expect(try response.error()["field"] as? String == field, "\(uri)")
            }
        }
    }

    /// Other control characters are storable: a tenant named with them reads back as sent.
    @Test(arguments: Backend.available)
    func otherControlCharactersAreStoredAsSent(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            let created = try await client.execute(
                uri: "/admin/v1/tenants", method: .post, headers: root, body: body(#"{"name":"a\u0001\u001f\u007fb"}"#))
            #expect(created.status == .created)
            let id = try #require(try created.json()["id"] as? String)
            let read = try await client.execute(uri: "/admin/v1/tenants/\(id)", method: .get, headers: root)
            #expect(try read.json()["name"] as? String == "a\u{1}\u{1F}\u{7F}b")
        }
    }
}
