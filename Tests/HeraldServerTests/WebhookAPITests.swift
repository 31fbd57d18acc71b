import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// `/admin/v1/apps/:app/webhooks`: register, list, show, delete, deliveries; bad input named by
/// its JSON path; the secret shown once and sealed at rest; other tenants see nothing.
@Suite struct WebhookAPITests {
    @Test(arguments: Backend.available)
    func anOperatorRegistersListsAndDeletesAnEndpoint(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            let fixture = try await Fixture.make(harness.store)
            let path = "/admin/v1/apps/\(fixture.app.id.lowercasedString)/webhooks"
            let created = try await client.execute(
                uri: path, method: .post, headers: root,
                body: body(#"{"url":"https://hooks.example.com/herald","events":["device.deactivated","push.done"]}"#))
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let endpoint = try created.json()
            let id = try #require(endpoint["id"] as? String)
            let secret = try #require(endpoint["secret"] as? String)
            #expect(secret.hasPrefix("whsec_"))
            #expect(endpoint["events"] as? [String] == ["push.done", "device.deactivated"])
            #expect(endpoint["url"] as? String == "https://hooks.example.com/herald")

            // Listed and shown without the secret.
            let listed = try await client.execute(uri: path, method: .get, headers: root)
            let items = try #require(try listed.json()["items"] as? [[String: Any]])
            #expect(items.map { $0["id"] as? String } == [id])
            #expect(!String(buffer: listed.body).contains(secret))
            let shown = try await client.execute(uri: "\(path)/\(id)", method: .get, headers: root)
            #expect(shown.status == .ok)
            #expect(try shown.json()["secret"] == nil)

            // Sealed at rest: the stored bytes do not hold it.
            let stored = try await harness.db.database.query("SELECT secret_sealed FROM webhook_endpoints")
            let sealed = try #require(try stored.first?.blob("secret_sealed"))
            #expect(!String(decoding: sealed, as: UTF8.self).contains(String(secret.dropFirst(6))))

            // Deliveries: none yet; a bad limit is named.
            let deliveries = try await client.execute(uri: "\(path)/\(id)/deliveries", method: .get, headers: root)
            #expect(deliveries.status == .ok)
            #expect((try deliveries.json()["items"] as? [Any])?.isEmpty == true)
            let badLimit = try await client.execute(uri: "\(path)/\(id)/deliveries?limit=0", method: .get, headers: root)
            #expect(badLimit.status == .badRequest)
            #expect(try badLimit.error()["field"] as? String == "limit")

            // Another tenant's token finds neither the app nor its endpoints.
            let other = try #require(try await harness.store.tenants.create(name: "other"))
            let (_, otherToken) = try await harness.store.adminTokens.create(tenantID: other.id, name: "ops")
            for uri in [path, "\(path)/\(id)", "\(path)/\(id)/deliveries"] {
                let response = try await client.execute(uri: uri, method: .get, headers: bearer(otherToken))
                #expect(response.status == .notFound, "\(uri)")
            }
            let foreignDelete = try await client.execute(uri: "\(path)/\(id)", method: .delete, headers: bearer(otherToken))
            #expect(foreignDelete.status == .notFound)

            let deleted = try await client.execute(uri: "\(path)/\(id)", method: .delete, headers: root)
            #expect(deleted.status == .noContent)
            let gone = try await client.execute(uri: "\(path)/\(id)", method: .get, headers: root)
            #expect(gone.status == .notFound)
            let again = try await client.execute(uri: "\(path)/\(id)", method: .delete, headers: root)
            #expect(again.status == .notFound)
        }
    }

    /// Each bad body is a 400 naming its field (the server runs without `--webhook-allow-private`).
    @Test(arguments: Backend.available)
    func badEndpointsAreRefusedNamingTheField(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            let fixture = try await Fixture.make(harness.store)
            let path = "/admin/v1/apps/\(fixture.app.id.lowercasedString)/webhooks"
            let cases: [(String, String)] = [
                (#"{"url":"http://hooks.example.com/x","events":["push.done"]}"#, "url"),
                (#"{"url":"https://127.0.0.1/x","events":["push.done"]}"#, "url"),
                (#"{"url":"https://[::1]:8443/x","events":["push.done"]}"#, "url"),
                (#"{"url":"https://169.254.169.254/latest","events":["push.done"]}"#, "url"),
                (#"{"url":"not a url","events":["push.done"]}"#, "url"),
                (#"{"url":42,"events":["push.done"]}"#, "url"),
                (#"{"events":["push.done"]}"#, "url"),
                (#"{"url":"https://hooks.example.com/x","events":[]}"#, "events"),
                (#"{"url":"https://hooks.example.com/x"}"#, "events"),
                (#"{"url":"https://hooks.example.com/x","events":["push.done","push.sent"]}"#, "events[1]"),
                (#"{"url":"https://hooks.example.com/x","events":["push.done","push.done"]}"#, "events[1]"),
                (#"{"url":"https://hooks.example.com/x","events":["push.done",7]}"#, "events[1]"),
            ]
            for (json, field) in cases {
                let response = try await client.execute(uri: path, method: .post, headers: root, body: body(json))
                #expect(response.status == .badRequest, "\(json)")
                #expect(try response.error()["field"] as? String == field, "\(json): \(String(buffer: response.body))")
            }
            #expect(try await harness.store.webhooks.list(applicationID: fixture.app.id).isEmpty)
        }
    }
}
