import Foundation
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// `DELETE /admin/v1/tenants/:tenant/tokens/:token_id`: by the token's id, never by the token.
@Suite struct AdminTokenRouteTests {
    @Test(arguments: Backend.available)
    func aTokenIsRevokedByItsIDAndNotByItsSecret(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let root = bearer(harness.adminToken)
            let tenant = try #require(
                try await client.execute(
                    uri: "/admin/v1/tenants", method: .post, headers: root, body: body(#"{"name":"t"}"#)
                ).json()["id"] as? String)
            let created = try await client.execute(
                uri: "/admin/v1/tenants/\(tenant)/tokens", method: .post, headers: root, body: body(#"{"name":"ops"}"#)
            ).json()
            let id = try #require(created["id"] as? String)
            let token = try #require(created["token"] as? String)
            #expect(try await client.execute(uri: "/admin/v1/apps", method: .get, headers: bearer(token)).status == .ok)

            // The secret in the id's place finds nothing.
            let bySecret = try await client.execute(uri: "/admin/v1/tenants/\(tenant)/tokens/\(token)", method: .delete, headers: root)
            #expect(bySecret.status == .notFound)
            #expect(
                try await client.execute(uri: "/admin/v1/tenants/\(tenant)/tokens/\(id)", method: .delete, headers: root).status
                    == .noContent)
            #expect(try await client.execute(uri: "/admin/v1/apps", method: .get, headers: bearer(token)).status == .unauthorized)
        }
    }
}
