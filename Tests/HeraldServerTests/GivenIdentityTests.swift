import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Applications and platforms created with the uuids, api keys and secrets they had elsewhere.
@Suite struct GivenIdentityTests {
    static let appUUID = "5B0E1F7A-3C2D-4E5F-8A9B-0C1D2E3F4A5B"
    static let apiKey = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    static let platformUUID = "c2a7e3f0-1b4d-4c8e-9f6a-2d3b5e7f9a1c"
    static let secret = "pivotal-style.secret_value~01"

    @Test(arguments: Backend.available)
    func keptIdentitiesAuthenticateAndStayHidden(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            let created = try await client.execute(
                uri: "/admin/v1/apps", method: .post, headers: root,
                body: body(#"{"name":"Moved","uuid":"\#(Self.appUUID)","api_key":"\#(Self.apiKey)"}"#))
            #expect(created.status == .created)
            let app = try created.json()
            // Stored and answered in lower case, as generated uuids are.
            #expect(app["uuid"] as? String == Self.appUUID.lowercased())
            #expect(app["api_key"] as? String == Self.apiKey)

            let platform = try await client.execute(
                uri: "/admin/v1/apps/\(Self.appUUID.lowercased())/platforms", method: .post, headers: root,
                body: body(#"{"type":"android","uuid":"\#(Self.platformUUID)","secret":"\#(Self.secret)"}"#))
            #expect(platform.status == .created)
            #expect(try platform.json()["uuid"] as? String == Self.platformUUID)
            #expect(try platform.json()["secret"] as? String == Self.secret)

            // What shipped apps and backends send keeps working.
            let register = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(Self.platformUUID, Self.secret),
                body: body(#"{"os":"android-fcm","registration_token":"kept-token-1"}"#))
            #expect(register.status == .ok)
            let listed = try await client.execute(
                uri: "/v2/registrations", method: .get, headers: basic(Self.appUUID.lowercased(), Self.apiKey))
            #expect(listed.status == .ok)
            #expect(
                try await client.execute(
                    uri: "/v1/registration/count", method: .get, headers: basic(Self.platformUUID, "wrong-secret-but-long")
                ).status
                    == .unauthorized)

            // Stored as generated ones are: a hash, never the secret; never shown again.
            for path in ["/admin/v1/apps/\(Self.appUUID.lowercased())", "/admin/v1/platforms/\(Self.platformUUID)", "/admin/v1/apps"] {
                let read = try await client.execute(uri: path, method: .get, headers: root)
                #expect(!String(buffer: read.body).contains(Self.apiKey))
                #expect(!String(buffer: read.body).contains(Self.secret))
            }
            let hashes = try await harness.db.database.query(
                "SELECT api_key_hash AS h FROM applications UNION ALL SELECT secret_hash AS h FROM platforms")
            let stored = try hashes.map { try $0.string("h") }
            #expect(stored.contains(Secret.hash(Self.apiKey)))
            #expect(stored.contains(Secret.hash(Self.secret)))
            // The signing secret (sealed) is the given one too: it keys signed custom user ids.
            let platformID = try #require(UUID(text: Self.platformUUID))
            #expect(try await harness.store.platforms.secret(id: platformID) == Self.secret)
        }
    }

    @Test(arguments: Backend.available)
    func givenIdentitiesAreChecked(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let root = bearer(harness.adminToken)
            let apps: [(String, String)] = [
                (#"{"name":"a","uuid":"not-a-uuid"}"#, "uuid"),
                (#"{"name":"a","uuid":"00000000-0000-0000-0000-000000000000"}"#, "uuid"),
                (#"{"name":"a","uuid":"5b0e1f7a3c2d4e5f8a9b0c1d2e3f4a5b"}"#, "uuid"),
                (#"{"name":"a","uuid":17}"#, "uuid"),
                (#"{"name":"a","api_key":"short"}"#, "api_key"),
                (#"{"name":"a","api_key":"has a space in it, long enough"}"#, "api_key"),
                (#"{"name":"a","api_key":"colon:would:break:basic:auth"}"#, "api_key"),
                (#"{"name":"a","api_key":"\#(String(repeating: "k", count: 129))"}"#, "api_key"),
            ]
            for (json, field) in apps {
                let response = try await client.execute(uri: "/admin/v1/apps", method: .post, headers: root, body: body(json))
                #expect(response.status == .badRequest, "\(json)")
                #expect(try response.error()["field"] as? String == field, "\(json)")
            }
            let platforms: [(String, String)] = [
                (#"{"type":"ios","uuid":"nope"}"#, "uuid"),
                (#"{"type":"ios","secret":"0123456789abcde"}"#, "secret"),
                (#"{"type":"ios","secret":"ünïcödé-secret-value"}"#, "secret"),
            ]
            for (json, field) in platforms {
                let response = try await client.execute(
                    uri: "/admin/v1/apps/\(fixture.app.id)/platforms", method: .post, headers: root, body: body(json))
                #expect(response.status == .badRequest, "\(json)")
                #expect(try response.error()["field"] as? String == field, "\(json)")
            }
            // Nothing half-made.
            #expect(try await harness.store.applications.list(tenantID: nil).count == 1)
            #expect(try await harness.store.platforms.list(applicationID: fixture.app.id).count == 1)

            // The shortest and longest secrets pass; a uuid in upper case too.
            let edge = try await client.execute(
                uri: "/admin/v1/apps", method: .post, headers: root,
                body: body(#"{"name":"edge","api_key":"\#(String(repeating: "k", count: 128))"}"#))
            #expect(edge.status == .created)
            let short = try await client.execute(
                uri: "/admin/v1/apps/\(fixture.app.id)/platforms", method: .post, headers: root,
                body: body(#"{"type":"ios","secret":"0123456789abcdef"}"#))
            #expect(short.status == .created)

            // Given only on creation: an update that names them is refused.
            let renameApp = try await client.execute(
                uri: "/admin/v1/apps/\(fixture.app.id)", method: .put, headers: root, body: body(#"{"api_key":"\#(Self.apiKey)"}"#))
            #expect(renameApp.status == .badRequest)
            #expect(try renameApp.error()["code"] as? String == "immutable_field")
            #expect(try renameApp.error()["field"] as? String == "api_key")
            let renamePlatform = try await client.execute(
                uri: "/admin/v1/platforms/\(fixture.platform.id)", method: .put, headers: root,
                body: body(#"{"uuid":"\#(Self.platformUUID)"}"#))
            #expect(renamePlatform.status == .badRequest)
            #expect(try renamePlatform.error()["field"] as? String == "uuid")
            #expect(try await client.execute(uri: "/v1/registration/count", method: .get, headers: basic(fixture)).status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func oneUUIDSpaceAcrossTenantsWithoutCrossingThem(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            // Tenant A's application and platform, with kept identities.
            let tenantA = try #require(
                try await client.execute(
                    uri: "/admin/v1/tenants", method: .post, headers: root, body: body(#"{"name":"a"}"#)
                ).json()["id"] as? String)
            let appA = try await client.execute(
                uri: "/admin/v1/apps", method: .post, headers: root,
                body: body(#"{"name":"A","tenant_id":"\#(tenantA)","uuid":"\#(Self.appUUID)","api_key":"\#(Self.apiKey)"}"#))
            #expect(appA.status == .created)
            let platformA = try await client.execute(
                uri: "/admin/v1/apps/\(Self.appUUID.lowercased())/platforms", method: .post, headers: root,
                body: body(#"{"type":"ios","uuid":"\#(Self.platformUUID)","secret":"\#(Self.secret)"}"#))
            #expect(platformA.status == .created)

            // Tenant B, with a token of its own.
            let tenantB = try #require(
                try await client.execute(
                    uri: "/admin/v1/tenants", method: .post, headers: root, body: body(#"{"name":"b"}"#)
                ).json()["id"] as? String)
            let tokenB = try #require(
                try await client.execute(
                    uri: "/admin/v1/tenants/\(tenantB)/tokens", method: .post, headers: root, body: body(#"{"name":"b"}"#)
                ).json()["token"]
                    as? String)
            let adminB = bearer(tokenB)
            let appB = try #require(
                try await client.execute(
                    uri: "/admin/v1/apps", method: .post, headers: adminB, body: body(#"{"name":"B"}"#)
                ).json()["uuid"] as? String)

            // A's uuids are taken for B, whichever kind B asks for: 409 naming the field.
            let attempts: [(String, String)] = [
                ("/admin/v1/apps", #"{"name":"steal","uuid":"\#(Self.appUUID.lowercased())","api_key":"another-key-0123456789"}"#),
                ("/admin/v1/apps", #"{"name":"steal","uuid":"\#(Self.platformUUID)"}"#),
                ("/admin/v1/apps/\(appB)/platforms", #"{"type":"ios","uuid":"\#(Self.platformUUID)","secret":"another-secret-0123"}"#),
                ("/admin/v1/apps/\(appB)/platforms", #"{"type":"ios","uuid":"\#(Self.appUUID)"}"#),
                // B's own application's uuid is in use too.
                ("/admin/v1/apps/\(appB)/platforms", #"{"type":"ios","uuid":"\#(appB)"}"#),
            ]
            for (path, json) in attempts {
                let response = try await client.execute(uri: path, method: .post, headers: adminB, body: body(json))
                #expect(response.status == .conflict, "\(json)")
                #expect(try response.error()["field"] as? String == "uuid", "\(json)")
                #expect(!String(buffer: response.body).contains("\"A\""), "nothing of A's shown")
            }
            // Nothing of A moved or changed: B still cannot see it; A's credentials still work.
            #expect(
                try await client.execute(uri: "/admin/v1/apps/\(Self.appUUID.lowercased())", method: .get, headers: adminB).status
                    == .notFound)
            #expect(
                try await client.execute(uri: "/admin/v1/platforms/\(Self.platformUUID)", method: .get, headers: adminB).status
                    == .notFound)
            let listedB = try await client.execute(uri: "/admin/v1/apps", method: .get, headers: adminB)
            #expect(try (listedB.json()["items"] as? [Any])?.count == 1)
            #expect(
                try await client.execute(
                    uri: "/v2/registrations", method: .get, headers: basic(Self.appUUID.lowercased(), Self.apiKey)
                ).status == .ok)
            #expect(
                try await client.execute(
                    uri: "/v1/registration/count", method: .get, headers: basic(Self.platformUUID, Self.secret)
                ).status == .ok)
            let appID = try #require(UUID(text: Self.appUUID))
            let stored = try #require(try await harness.store.applications.find(id: appID))
            #expect(stored.tenantID.lowercasedString == tenantA)
            #expect(try await harness.store.platforms.list(applicationID: stored.id).count == 1)
        }
    }
}

/// An Android platform's `fcm_notification`: off by default (data messages, as the PCF SDK needs).
@Suite struct FCMNotificationSettingTests {
    @Test(arguments: Backend.available)
    func androidPlatformsSendDataMessagesUnlessAsked(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let root = bearer(harness.adminToken)
            let android = try await client.execute(
                uri: "/admin/v1/apps/\(fixture.app.id)/platforms", method: .post, headers: root, body: body(#"{"type":"android"}"#))
            #expect(android.status == .created)
            #expect(try android.json()["fcm_notification"] as? Bool == false)
            let uuid = try #require(try android.json()["uuid"] as? String)
            let changed = try await client.execute(
                uri: "/admin/v1/platforms/\(uuid)", method: .put, headers: root, body: body(#"{"fcm_notification":true}"#))
            #expect(try changed.json()["fcm_notification"] as? Bool == true)
            let platformID = try #require(UUID(text: uuid))
            #expect(try await harness.store.platforms.find(id: platformID)?.fcmNotification == true)
            let shown = try await client.execute(
                uri: "/admin/v1/apps/\(fixture.app.id)/platforms", method: .post, headers: root,
                body: body(#"{"type":"android","fcm_notification":true}"#))
            #expect(try shown.json()["fcm_notification"] as? Bool == true)

            // Only Android platforms have it; the others do not show it.
            let ios = try await client.execute(
                uri: "/admin/v1/apps/\(fixture.app.id)/platforms", method: .post, headers: root,
                body: body(#"{"type":"ios","fcm_notification":true}"#))
            #expect(ios.status == .badRequest)
            #expect(try ios.error()["field"] as? String == "fcm_notification")
            let read = try await client.execute(uri: "/admin/v1/platforms/\(fixture.platform.id)", method: .get, headers: root)
            #expect(try read.json()["fcm_notification"] == nil)
        }
    }
}
