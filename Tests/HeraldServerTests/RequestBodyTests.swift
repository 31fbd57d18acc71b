import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// What the JSON routes say of a body that is not what they read: its JSON type, its declared
/// media type; and the unit of `q`'s limit. The OpenAPI document states each answer.
@Suite struct RequestBodyTests {
    /// A body of another JSON type where an object is expected is called what it should be: an
    /// object (the decoder's dictionary type was once named "a list").
    @Test(arguments: Backend.available)
    func aBodyThatIsNoObjectIsToldAnObjectIsExpected(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            for json in ["[]", "[1]", "\"text\"", "42", "true"] {
                for (uri, headers) in [
                    ("/v1/push", appAuth(fixture)), ("/v1/registration", basic(fixture)),
                    ("/admin/v1/tenants", bearer(harness.adminToken)), ("/v2/topics", appAuth(fixture)),
                ] {
                    let response = try await client.execute(uri: uri, method: .post, headers: headers, body: body(json))
                    #expect(response.status == .badRequest, "\(uri) \(json)")
                    let error = try response.error()
                    #expect(error["code"] as? String == "invalid_type", "\(uri) \(json)")
                    #expect(error["message"] as? String == "the body must be an object", "\(uri) \(json)")
                }
            }
            // A list where a list is expected is still called a list.
            let list = try await client.execute(
                uri: "/admin/v1/tenants", method: .post, headers: bearer(harness.adminToken), body: body(#"{"name":["x"]}"#))
            #expect(try list.error()["field"] as? String == "name")
            let members = try await client.execute(
                uri: "/v2/topics/batch", method: .post, headers: appAuth(fixture), body: body(#"{"topics":{"name":"x"}}"#))
            #expect(try members.error()["message"] as? String == "topics must be a list")
        }
    }

    /// A body declared as anything but JSON is refused with 415 and changes nothing; a body
    /// without a `Content-Type` is read as JSON (Pivotal's clients send some so), and JSON with
    /// parameters or a `+json` type is JSON.
    @Test(arguments: Backend.available)
    func aBodyDeclaredAsAnotherMediaTypeIs415(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let registration = #"{"registration_token":"abcd","device_alias":"typed"}"#
            for contentType in ["text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "application/jsonx"] {
                var headers = basic(fixture)
                headers[.contentType] = contentType
                let response = try await client.execute(uri: "/v1/registration", method: .post, headers: headers, body: body(registration))
                #expect(response.status == .unsupportedMediaType, "\(contentType)")
                #expect(try response.error()["code"] as? String == "unsupported_media_type", "\(contentType)")
            }
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 0)

            var push = appAuth(fixture)
            push[.contentType] = "text/plain"
            let refused = try await client.execute(
                uri: "/v1/push", method: .post, headers: push, body: body(#"{"message":{"body":"hi"},"target":{"platforms":["ios"]}}"#))
            #expect(refused.status == .unsupportedMediaType)

            let accepted = [nil, "application/json", "Application/JSON; charset=utf-8", "application/merge-patch+json"]
            for (index, contentType) in accepted.enumerated() {
                var headers = basic(fixture)
                headers[.contentType] = nil
                if let contentType { headers[.contentType] = contentType }
                let response = try await client.execute(
                    uri: "/v1/registration", method: .post, headers: headers, body: body(#"{"registration_token":"abc\#(index)"}"#))
                #expect(response.status == .ok || response.status == .created, "\(contentType ?? "no Content-Type")")
            }
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 4)
        }
    }

    /// `q` is limited to 255 code points, as the document's `maxLength` counts, not 255
    /// grapheme clusters (a combining accent is a code point of its own).
    @Test(arguments: Backend.available)
    func qIsLimitedTo255CodePoints(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            // "é" as "e" and U+0301: 2 code points, 1 character.
            let accented = String(repeating: "e%CC%81", count: 128)
            for path in ["/v2/registrations", "/v2/custom_user_ids"] {
                let over = try await client.execute(uri: "\(path)?q=\(accented)", method: .get, headers: appAuth(fixture))
                #expect(over.status == .badRequest, "\(path)")
                #expect(try over.error()["field"] as? String == "q")
                let at = try await client.execute(
                    uri: "\(path)?q=\(String(repeating: "e%CC%81", count: 127))a", method: .get, headers: appAuth(fixture))
                #expect(at.status == .ok, "\(path)")
            }
        }
    }
}
