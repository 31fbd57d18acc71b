import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Registrations carrying a custom user id, for apps that verify it (the default) and apps that
/// do not.
@Suite struct CustomUserIDRegistrationTests {
    let token = "b50edac575bfba07dd019b28b2af7189a3ddda17c806ef14a9abbfd00533f67e"

    func signed(_ id: String, _ fixture: Fixture) -> String {
        CustomUserIDToken.sign(customUserID: id, key: Array(fixture.platformSecret.utf8))
    }

    @Test(arguments: Backend.available)
    func aSignedIDIsVerifiedAndStoredPlain(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            #expect(fixture.app.verifiesCustomUserID)
            let post = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"\#(token)","custom_user_id":"\#(signed("jsmith", fixture))"}"#))
            #expect(post.status == .ok, "\(String(buffer: post.body))")
            #expect(try post.json()["custom_user_id"] as? String == "jsmith")
            let uuid = try #require(try post.json()["device_uuid"] as? String)

            let put = try await client.execute(
                uri: "/v1/registration/\(uuid)", method: .put, headers: basic(fixture),
                body: body(#"{"custom_user_id":"\#(signed("john.smith", fixture))"}"#))
            #expect(try put.json()["custom_user_id"] as? String == "john.smith")
            // Clearing needs no token.
            let cleared = try await client.execute(
                uri: "/v1/registration/\(uuid)", method: .put, headers: basic(fixture), body: body(#"{"custom_user_id":""}"#))
            #expect(cleared.status == .ok)
            #expect(try cleared.json()["custom_user_id"] == nil || (try cleared.json()["custom_user_id"] is NSNull))
        }
    }

    /// A bad signature or a malformed token is a 400 naming the field, and changes nothing.
    @Test(arguments: Backend.available)
    func badTokensAreRefusedAndChangeNothing(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let other = try await Fixture.make(harness.store)
            let forged = CustomUserIDToken.sign(customUserID: "admin", key: Array(other.platformSecret.utf8))
            let cases: [(String, String)] = [(forged, "invalid_signature"), ("jsmith", "invalid_field"), ("a.b.c", "invalid_field")]
            for (value, code) in cases {
                let response = try await client.execute(
                    uri: "/v1/registration", method: .post, headers: basic(fixture),
                    body: body(#"{"registration_token":"\#(token)","custom_user_id":"\#(value)"}"#))
                #expect(response.status == .badRequest)
                #expect(try response.error()["field"] as? String == "custom_user_id")
                #expect(try response.error()["code"] as? String == code)
            }
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 0)

            let post = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"\#(token)","custom_user_id":"\#(signed("ann", fixture))","tags":["a"]}"#))
            let uuid = try #require(try post.json()["device_uuid"] as? String)
            for (value, _) in cases {
                let response = try await client.execute(
                    uri: "/v1/registration/\(uuid)", method: .put, headers: basic(fixture),
                    body: body(#"{"custom_user_id":"\#(value)","tags":["b"],"device_alias":"changed"}"#))
                #expect(response.status == .badRequest)
            }
            let device = try #require(try await harness.store.devices.find(platformID: fixture.platform.id, uuid: UUID(uuidString: uuid)!))
            #expect(device.customUserID == "ann")
            #expect(device.tags == ["a"])
            #expect(device.deviceAlias == nil)
        }
    }

    /// The setting is in the admin API; off, plain ids are accepted.
    @Test(arguments: Backend.available)
    func verificationCanBeTurnedOffPerApp(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let app = fixture.app.id.uuidString.lowercased()
            let shown = try await client.execute(uri: "/admin/v1/apps/\(app)", method: .get, headers: bearer(harness.adminToken))
            #expect(try shown.json()["verify_custom_user_id"] as? Bool == true)
            let off = try await client.execute(
                uri: "/admin/v1/apps/\(app)", method: .put, headers: bearer(harness.adminToken),
                body: body(#"{"verify_custom_user_id":false}"#))
            #expect(try off.json()["verify_custom_user_id"] as? Bool == false)
            let wrong = try await client.execute(
                uri: "/admin/v1/apps/\(app)", method: .put, headers: bearer(harness.adminToken),
                body: body(#"{"verify_custom_user_id":"no"}"#))
            #expect(wrong.status == .badRequest)
            #expect(try wrong.error()["field"] as? String == "verify_custom_user_id")

            let plain = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"\#(token)","custom_user_id":"Ann@Example.com"}"#))
            #expect(plain.status == .ok)
            #expect(try plain.json()["custom_user_id"] as? String == "Ann@Example.com")

            let created = try await client.execute(
                uri: "/admin/v1/apps", method: .post, headers: bearer(harness.adminToken),
                body: body(#"{"name":"Plain","verify_custom_user_id":false}"#))
            #expect(created.status == .created)
            #expect(try created.json()["verify_custom_user_id"] as? Bool == false)
        }
    }

    /// A platform whose sealed secret cannot be opened gets a 400 saying to regenerate it; after
    /// regenerating, tokens signed with the new secret work.
    @Test(arguments: Backend.available)
    func anUnreadableSecretAsksForARegeneratedOne(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            // Sealed under another key, as after an encryption-key change.
            let otherBox = try SecretBox(keyBytes: Array(repeating: 9, count: 32))
            let foreign = try otherBox.seal(
                Array(fixture.platformSecret.utf8), context: "platform-secret:\(fixture.platform.id.uuidString.lowercased())")
            try await harness.store.database.query("UPDATE platforms SET secret_sealed = \(foreign) WHERE id = \(fixture.platform.id)")
            let refused = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture),
                body: body(#"{"registration_token":"\#(token)","custom_user_id":"\#(signed("ann", fixture))"}"#))
            #expect(refused.status == .badRequest)
            #expect(try refused.error()["code"] as? String == "platform_secret_unavailable")
            #expect(try refused.error()["field"] as? String == "custom_user_id")
            #expect((try refused.error()["message"] as? String)?.contains("regenerate") == true)

            let secret = try #require(try await harness.store.platforms.regenerateSecret(id: fixture.platform.id))
            var renewed = fixture
            renewed.platformSecret = secret
            let accepted = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(renewed),
                body: body(#"{"registration_token":"\#(token)","custom_user_id":"\#(signed("ann", renewed))"}"#))
            #expect(accepted.status == .ok)
            #expect(try accepted.json()["custom_user_id"] as? String == "ann")
        }
    }
}
