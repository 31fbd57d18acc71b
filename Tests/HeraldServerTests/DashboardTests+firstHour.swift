import Foundation
import HTTPTypes
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldServer

/// Issue 32's dashboard edges that the server decides: its own 404 and 403 pages, the page asked
/// for before signing in, the favicon.
extension DashboardTests {
    @Test func anUnknownDashboardAddressGetsTheDashboardsNotFoundPage() async throws {
        try await ServerHarness.run(.sqlite) { harness, client in
            let session = try await Dashboard.signIn(client, harness.adminToken)
            let page = try await client.execute(uri: "/dashboard/no/such/page", method: .get, headers: Dashboard.cookie(session))
            #expect(page.status == .notFound)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            #expect(html.contains("<h1>Not found</h1>") && html.contains("/dashboard/apps"))
        }
    }

    @Test func aTenantTokenOnTenantsIsToldOnlyTheRootTokenManagesThem() async throws {
        try await ServerHarness.run(.sqlite) { harness, client in
            let tenant = try #require(try await harness.store.tenants.create(name: "ops"))
            let (_, token) = try await harness.store.adminTokens.create(tenantID: tenant.id, name: "ops")
            let session = try await Dashboard.signIn(client, token)
            let page = try await client.execute(uri: "/dashboard/tenants", method: .get, headers: Dashboard.cookie(session))
            #expect(page.status == .forbidden)
            let html = String(buffer: page.body)
            #expect(html.contains("Only the root token can manage tenants"))
            #expect(!html.contains("Something went wrong"))
        }
    }

    @Test func signingInReturnsToThePageAskedFor() async throws {
        try await ServerHarness.run(.sqlite) { harness, client in
            let asked = "/dashboard/apps/\(UUID().uuidString.lowercased())/devices?size=5&page=2"
            let signedOut = try await client.execute(uri: asked, method: .get)
            #expect(signedOut.status == .seeOther)
            let location = try #require(signedOut.headers[.location])
            #expect(location.hasPrefix("/dashboard/signin?next="))
            let next = try #require(URLComponents(string: location)?.queryItems?.first { $0.name == "next" }?.value)
            #expect(next == asked)
            let page = try await client.execute(uri: location, method: .get)
            #expect(String(buffer: page.body).contains(#"name="next""#))
            let signedIn = try await client.execute(
                uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders,
                body: Dashboard.form(["token": harness.adminToken, "next": next]))
            #expect(signedIn.headers[.location] == asked)
            // Only a dashboard address: nothing sends the browser to another site.
            for elsewhere in [
                "https://example.com/dashboard/apps", "//example.com/dashboard", "/dashboard/../admin", "/admin/v1/apps", "/dashboard\\x",
            ] {
                let answer = try await client.execute(
                    uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders,
                    body: Dashboard.form(["token": harness.adminToken, "next": elsewhere]))
                #expect(answer.headers[.location] == "/dashboard/apps", "\(elsewhere)")
            }
        }
    }

    @Test func theDashboardHasItsOwnFavicon() async throws {
        try await ServerHarness.run(.sqlite) { harness, client in
            let icon = try await client.execute(uri: "/dashboard/static/favicon.svg", method: .get)
            #expect(icon.status == .ok)
            #expect(icon.headers[.contentType] == "image/svg+xml")
            #expect(String(buffer: icon.body).hasPrefix("<svg"))
            let page = try await client.execute(uri: "/dashboard/signin", method: .get)
            #expect(String(buffer: page.body).contains(#"<link rel="icon" href="/dashboard/static/favicon.svg" type="image/svg+xml">"#))
        }
    }
}

extension DashboardTests {
    /// Without Debian's libjs-leaflet the Locations page says there is no map (no empty box
    /// asking to be clicked), and the server says so at start.
    @Test func withoutTheMapLibraryTheLocationsPageSaysSo() async throws {
        let missing = "/nonexistent/herald-dashboard-assets"
        let warnings = DashboardPages.warnings(vendorDirectory: missing)
        #expect(warnings.contains { $0.contains("libjs-leaflet") })
        #expect(warnings.contains { $0.contains("libjs-chart.js") })
        try await withTestDatabase(.sqlite) { db in
            let fixture = try await Fixture.make(db.store)
            let (_, token) = try await db.store.adminTokens.create(tenantID: nil, name: "root")
            let app = Application(
                router: buildRouter(store: db.store, dashboardAssets: missing),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: TestDatabase.logger)
            try await app.test(.router) { client in
                let session = try await Dashboard.signIn(client, token)
                let page = try await client.execute(
                    uri: "/dashboard/apps/\(fixture.app.id.lowercasedString)/locations", method: .get, headers: Dashboard.cookie(session))
                let html = String(buffer: page.body)
                #expect(html.contains(#"id="map-missing""#) && html.contains("libjs-leaflet"))
                #expect(!html.contains(#"id="map""#))
                #expect(!html.contains("Click the map"))
            }
        }
    }
}
