import Crypto
import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@Suite struct AdminAPITests {
    @Test(arguments: Backend.available)
    func anOperatorSetsUpAnAppAndItsPlatforms(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            let created = try await client.execute(
                uri: "/admin/v1/apps", method: .post, headers: root, body: body(#"{"name":"News","description":"daily news"}"#))
            #expect(created.status == .created)
            let app = try created.json()
            let appUUID = try #require(app["uuid"] as? String)
            let apiKey = try #require(app["api_key"] as? String)

            let p8 = P256.Signing.PrivateKey().pemRepresentation.replacingOccurrences(of: "\n", with: "\\n")
            let ios = try await client.execute(
                uri: "/admin/v1/apps/\(appUUID)/platforms", method: .post, headers: root,
                body: body(
                    #"{"type":"ios","name":"iPhone","credentials":{"p8":"\#(p8)","key_id":"ABC123DEFG","team_id":"DEF123GHIJ","topic":"com.example.news"}}"#
                ))
            #expect(ios.status == .created)
            let platform = try ios.json()
            let platformUUID = try #require(platform["uuid"] as? String)
            let secret = try #require(platform["secret"] as? String)
            let shown = try #require(platform["credentials"] as? [String: String])
            #expect(shown["kind"] == "apns_token")
            #expect(shown["topic"] == "com.example.news")
            #expect(shown["p8"] == nil)
            #expect(platform["credentials_status"] as? String == "ok")

            // The platform's credentials work for devices; reading it back shows no secret.
            let register = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(platformUUID, secret), body: body(#"{"registration_token":"abcd"}"#))
            #expect(register.status == .ok)
            let read = try await client.execute(uri: "/admin/v1/platforms/\(platformUUID)", method: .get, headers: root)
            #expect(try read.json()["secret"] == nil)
            #expect(String(buffer: read.body).contains(secret) == false)
            let listedApps = try await client.execute(uri: "/admin/v1/apps", method: .get, headers: root)
            #expect(String(buffer: listedApps.body).contains(apiKey) == false)

            // A web platform gets a VAPID key pair; its public key is shown.
            let web = try await client.execute(
                uri: "/admin/v1/apps/\(appUUID)/platforms", method: .post, headers: root,
                body: body(#"{"type":"web","credentials":{"subject":"mailto:ops@example.com"}}"#))
            #expect(((try web.json()["credentials"] as? [String: String])?["public_key"]?.count ?? 0) > 80)

            // Devices of the app, through the admin API.
            let devices = try await client.execute(uri: "/admin/v1/apps/\(appUUID)/devices", method: .get, headers: root)
            #expect(try devices.json()["total"] as? Int == 1)
        }
    }

    @Test(arguments: Backend.available)
    func regeneratedKeysStopTheOldOnesAtOnce(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let root = bearer(harness.adminToken)
            #expect(try await client.execute(uri: "/v2/registrations", method: .get, headers: appAuth(fixture)).status == .ok)
            let regenerated = try await client.execute(uri: "/admin/v1/apps/\(fixture.app.id)/api_key", method: .post, headers: root)
            let newKey = try #require(try regenerated.json()["api_key"] as? String)
            #expect(try await client.execute(uri: "/v2/registrations", method: .get, headers: appAuth(fixture)).status == .unauthorized)
            let withNew = basic(fixture.app.id.uuidString, newKey)
            #expect(try await client.execute(uri: "/v2/registrations", method: .get, headers: withNew).status == .ok)

            let secret = try await client.execute(uri: "/admin/v1/platforms/\(fixture.platform.id)/secret", method: .post, headers: root)
            let newSecret = try #require(try secret.json()["secret"] as? String)
            #expect(try await client.execute(uri: "/v1/registration/count", method: .get, headers: basic(fixture)).status == .unauthorized)
            let withNewSecret = basic(fixture.platform.id.uuidString, newSecret)
            #expect(try await client.execute(uri: "/v1/registration/count", method: .get, headers: withNewSecret).status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func badCredentialsAreRefusedNamingTheProblem(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let root = bearer(harness.adminToken)
            let cases: [(String, String)] = [
                (
                    #"{"type":"ios","credentials":{"p8":"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----","key_id":"ABC123DEFG","team_id":"DEF123GHIJ","topic":"t"}}"#,
                    "credentials.p8"
                ),
                (#"{"type":"ios","credentials":{"p12":"\#(P12Fixtures.legacy)","password":"wrong","topic":"t"}}"#, "credentials.password"),
                (
                    #"{"type":"android","credentials":{"service_account":"{\"type\":\"service_account\"}"}}"#,
                    "credentials.service_account.project_id"
                ),
                (#"{"type":"android","credentials":{"service_account":"not json"}}"#, "credentials.service_account"),
                (#"{"type":"windows","credentials":{"client_id":"ms-app://x"}}"#, "credentials.client_secret"),
                (#"{"type":"web","credentials":{"subject":"nobody"}}"#, "credentials.subject"),
                (#"{"type":"windowsPhone"}"#, "type"),
                (#"{"type":"bb10"}"#, "type"),
                (#"{"name":"x"}"#, "type"),
            ]
            for (json, field) in cases {
                let response = try await client.execute(
                    uri: "/admin/v1/apps/\(fixture.app.id)/platforms", method: .post, headers: root, body: body(json))
                #expect(response.status == .badRequest, "\(json.prefix(50))")
                #expect(try response.error()["field"] as? String == field, "\(json.prefix(50))")
            }
            #expect(try await harness.store.platforms.list(applicationID: fixture.app.id).count == 1)
            let good = try await client.execute(
                uri: "/admin/v1/apps/\(fixture.app.id)/platforms", method: .post, headers: root,
                body: body(
                    #"{"type":"ios","credentials":{"p12":"\#(P12Fixtures.legacy)","password":"\#(P12Fixtures.password)","topic":"com.example.app"}}"#
                ))
            #expect(good.status == .created)
            #expect((try good.json()["credentials"] as? [String: String])?["kind"] == "apns_certificate")
        }
    }

    @Test(arguments: Backend.available)
    func deletesRefuseWhatIsStillInUseAndTypesAreFixed(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let root = bearer(harness.adminToken)
            _ = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(fixture), body: body(#"{"registration_token":"abcd"}"#))
            let deleteApp = try await client.execute(uri: "/admin/v1/apps/\(fixture.app.id)", method: .delete, headers: root)
            #expect(deleteApp.status == .conflict)
            let deletePlatform = try await client.execute(uri: "/admin/v1/platforms/\(fixture.platform.id)", method: .delete, headers: root)
            #expect(deletePlatform.status == .conflict)
            let retype = try await client.execute(
                uri: "/admin/v1/platforms/\(fixture.platform.id)", method: .put, headers: root, body: body(#"{"type":"android"}"#))
            #expect(retype.status == .badRequest)
            #expect(try retype.error()["field"] as? String == "type")
            let rename = try await client.execute(
                uri: "/admin/v1/platforms/\(fixture.platform.id)", method: .put, headers: root, body: body(#"{"name":"Production"}"#))
            #expect(try rename.json()["name"] as? String == "Production")
            let renameApp = try await client.execute(
                uri: "/admin/v1/apps/\(fixture.app.id)", method: .put, headers: root, body: body(#"{"name":"Renamed"}"#))
            #expect(try renameApp.json()["uuid"] as? String == fixture.app.id.uuidString.lowercased())
            #expect(try renameApp.json()["name"] as? String == "Renamed")
        }
    }

    @Test(arguments: Backend.available)
    func aTenantTokenSeesOnlyItsTenant(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            let mine = try await Fixture.make(harness.store, tenantName: "mine")
            let theirs = try await Fixture.make(harness.store, tenantName: "theirs")
            let token = try await client.execute(
                uri: "/admin/v1/tenants/\(mine.app.tenantID)/tokens", method: .post, headers: root, body: body(#"{"name":"ops"}"#))
            #expect(token.status == .created)
            let scoped = bearer(try #require(try token.json()["token"] as? String))

            let apps = try await client.execute(uri: "/admin/v1/apps", method: .get, headers: scoped).json()
            #expect((apps["items"] as? [[String: Any]])?.map { $0["uuid"] as? String } == [mine.app.id.uuidString.lowercased()])
            let tenants = try await client.execute(uri: "/admin/v1/tenants", method: .get, headers: scoped).json()
            #expect((tenants["items"] as? [Any])?.count == 1)
            for (method, uri) in [
                (HTTPRequest.Method.get, "/admin/v1/apps/\(theirs.app.id)"),
                (.delete, "/admin/v1/apps/\(theirs.app.id)"),
                (.post, "/admin/v1/apps/\(theirs.app.id)/api_key"),
                (.get, "/admin/v1/apps/\(theirs.app.id)/devices"),
                (.get, "/admin/v1/apps/\(theirs.app.id)/platforms"),
                (.get, "/admin/v1/platforms/\(theirs.platform.id)"),
                (.post, "/admin/v1/platforms/\(theirs.platform.id)/secret"),
                (.get, "/admin/v1/tenants/\(theirs.app.tenantID)"),
                (.post, "/admin/v1/tenants/\(theirs.app.tenantID)/tokens"),
            ] {
                let response = try await client.execute(uri: uri, method: method, headers: scoped, body: body(#"{"name":"x"}"#))
                #expect(response.status == .notFound, "\(method) \(uri)")
            }
            let foreignTenant = try await client.execute(
                uri: "/admin/v1/apps", method: .post, headers: scoped, body: body(#"{"name":"x","tenant_id":"\#(theirs.app.tenantID)"}"#))
            #expect(foreignTenant.status == .notFound)
            let ownApp = try await client.execute(uri: "/admin/v1/apps", method: .post, headers: scoped, body: body(#"{"name":"Second"}"#))
            #expect(try ownApp.json()["tenant_id"] as? String == mine.app.tenantID.uuidString.lowercased())
            let createTenant = try await client.execute(
                uri: "/admin/v1/tenants", method: .post, headers: scoped, body: body(#"{"name":"new"}"#))
            #expect(createTenant.status == .forbidden)
            // The other tenant's api key is unchanged.
            #expect(try await harness.store.applications.authenticate(id: theirs.app.id, apiKey: theirs.apiKey) != nil)
        }
    }

    @Test func adminRoutesNeedAValidToken() async throws {
        try await ServerHarness.run(.sqlite) { harness, client in
            for headers in [HTTPFields(), bearer("wrong"), basic("a", "b")] {
                let response = try await client.execute(uri: "/admin/v1/apps", method: .get, headers: headers)
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Bearer realm=\"herald\"")
            }
            let duplicate = try await client.execute(
                uri: "/admin/v1/tenants", method: .post, headers: bearer(harness.adminToken), body: body(#"{"name":"default"}"#))
            #expect(duplicate.status == .conflict)
        }
    }
}
