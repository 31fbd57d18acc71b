import Foundation
import HTTPTypes
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// The dashboard's security bar: the session cookie, CSRF, escaping, tenant isolation and the
/// sign-in rate limit, on both databases where data is involved. (The browser suite,
/// scripts/test-dashboard, drives the pages themselves in Chromium.)
@Suite struct DashboardTests {
    static let payload = "<script>alert('x')</script>\"<img src=x onerror=alert(1)>"

    @Test(arguments: Backend.available)
    func signingInSetsAHardenedSessionCookieThatNeverHoldsTheToken(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let signedOut = try await client.execute(uri: "/dashboard/apps", method: .get)
            #expect(signedOut.status == .seeOther)
            #expect(signedOut.headers[.location]?.hasPrefix("/dashboard/signin") == true)

            let response = try await client.execute(
                uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders, body: Dashboard.form(["token": harness.adminToken])
            )
            #expect(response.status == .seeOther)
            let cookie = try #require(response.headers[.setCookie])
            let attributes = Set(cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
            #expect(attributes.contains("httponly"))
            #expect(attributes.contains("samesite=strict"))
            #expect(attributes.contains("path=/dashboard"))
            #expect(attributes.contains { $0.hasPrefix("max-age=") && Int($0.dropFirst(8)).map { $0 > 0 && $0 <= 86_400 } == true })
            #expect(!attributes.contains("secure"), "plain HTTP: a Secure cookie would never come back")
            #expect(!cookie.contains(harness.adminToken))

            let session = try #require(Dashboard.session(from: response))
            let page = try await client.execute(uri: "/dashboard/apps", method: .get, headers: Dashboard.cookie(session))
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.cacheControl] == "no-store")
            #expect(page.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)

            // Behind a TLS proxy the cookie is Secure.
            var tls = Dashboard.formHeaders
            tls[HTTPField.Name("X-Forwarded-Proto")!] = "https"
            let secure = try await client.execute(
                uri: "/dashboard/signin", method: .post, headers: tls, body: Dashboard.form(["token": harness.adminToken]))
            #expect(secure.headers[.setCookie]?.lowercased().contains("; secure") == true)

            // Signing out ends the session on the server, not only in the browser.
            let csrf = try Dashboard.csrf(String(buffer: page.body))
            let out = try await client.execute(
                uri: "/dashboard/signout", method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(["csrf": csrf]))
            #expect(out.status == .seeOther)
            #expect(out.headers[.setCookie]?.lowercased().contains("max-age=0") == true)
            let after = try await client.execute(uri: "/dashboard/apps", method: .get, headers: Dashboard.cookie(session))
            #expect(after.headers[.location]?.hasPrefix("/dashboard/signin") == true)
        }
    }

    @Test(arguments: Backend.available)
    func aDeletedAdminTokenEndsItsSessions(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let tenant = try #require(try await harness.store.tenants.create(name: "ops"))
            let (record, token) = try await harness.store.adminTokens.create(tenantID: tenant.id, name: "ops")
            let session = try await Dashboard.signIn(client, token)
            #expect(try await client.execute(uri: "/dashboard/apps", method: .get, headers: Dashboard.cookie(session)).status == .ok)
            #expect(try await harness.store.adminTokens.delete(id: record.id, tenantID: tenant.id))
            let after = try await client.execute(uri: "/dashboard/apps", method: .get, headers: Dashboard.cookie(session))
            #expect(after.headers[.location]?.hasPrefix("/dashboard/signin") == true)
        }
    }

    @Test func wrongTokensGetOnePlainMessageAndAreRateLimited() async throws {
        try await ServerHarness.run(.sqlite) { harness, client in
            for attempt in 1...5 {
                let wrong = try await client.execute(
                    uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders,
                    body: Dashboard.form(["token": "guess-\(attempt)"]))
                #expect(wrong.status == .unauthorized)
                #expect(String(buffer: wrong.body).contains("That admin token was not accepted."))
                #expect(wrong.headers[.setCookie] == nil)
            }
            let limited = try await client.execute(
                uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders, body: Dashboard.form(["token": "guess-6"]))
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter].flatMap { Int($0) }.map { (1...60).contains($0) } == true)
            // A right token is never refused: a guesser behind the same proxy cannot lock operators out.
            let right = try await client.execute(
                uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders, body: Dashboard.form(["token": harness.adminToken])
            )
            #expect(right.status == .seeOther)
            #expect(Dashboard.session(from: right) != nil)
        }
    }

    @Test(arguments: Backend.available)
    func stateChangingFormsAreRefusedWithoutTheCSRFToken(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let session = try await Dashboard.signIn(client, harness.adminToken)
            for csrf in [nil, "", "forged"] as [String?] {
                var fields = ["name": "Sneaky"]
                fields["csrf"] = csrf
                let refused = try await client.execute(
                    uri: "/dashboard/apps", method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(fields))
                #expect(refused.status == .forbidden)
            }
            #expect(try await harness.store.applications.list(tenantID: nil).isEmpty)

            let csrf = try await Dashboard.csrf(client, session)
            let created = try await client.execute(
                uri: "/dashboard/apps", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["name": "Real", "csrf": csrf]))
            #expect(created.status == .ok)
            let app = try #require(try await harness.store.applications.list(tenantID: nil).first)
            #expect(app.name == "Real")
            let createdHTML = String(buffer: created.body)
            #expect(createdHTML.contains("Application created"))
            let apiKey = try #require(
                createdHTML.firstMatch(of: /id="shown-secret">([^<]+)</).map { String($0.1) }, "the new API key is shown")

            // Deleting and regenerating without the token do nothing either.
            let delete = try await client.execute(
                uri: "/dashboard/apps/\(app.id.lowercasedString)/delete", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": "forged"]))
            #expect(delete.status == .forbidden)
            #expect(try await harness.store.applications.find(id: app.id, tenantID: nil) != nil)
            let regenerate = try await client.execute(
                uri: "/dashboard/apps/\(app.id.lowercasedString)/api_key", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": "forged"]))
            #expect(regenerate.status == .forbidden)
            #expect(try await harness.store.applications.authenticate(id: app.id, apiKey: apiKey) != nil, "the API key still works")
            // Another session's token is not this session's.
            let other = try await Dashboard.signIn(client, harness.adminToken)
            let otherCSRF = try await Dashboard.csrf(client, other)
            let crossed = try await client.execute(
                uri: "/dashboard/apps/\(app.id.lowercasedString)/delete", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": otherCSRF]))
            #expect(crossed.status == .forbidden)
            #expect(try await harness.store.applications.find(id: app.id, tenantID: nil) != nil)
        }
    }

    @Test(arguments: Backend.available)
    func everyTextShownIsEscaped(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let payload = Self.payload
            let root = bearer(harness.adminToken)
            let app = try await client.execute(
                uri: "/admin/v1/apps", method: .post, headers: root,
                body: body(#"{"name":\#(Dashboard.json(payload)),"description":\#(Dashboard.json(payload)),"verify_custom_user_id":false}"#)
            ).json()
            let appUUID = try #require(app["uuid"] as? String)
            let apiKey = try #require(app["api_key"] as? String)
            let platform = try await client.execute(
                uri: "/admin/v1/apps/\(appUUID)/platforms", method: .post, headers: root,
                body: body(#"{"type":"ios","name":\#(Dashboard.json(payload))}"#)
            ).json()
            let platformUUID = try #require(platform["uuid"] as? String)
            let secret = try #require(platform["secret"] as? String)
            let registered = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(platformUUID, secret),
                body: body(
                    #"{"os":"ios","registration_token":"\#(randomAPNsToken())","device_alias":\#(Dashboard.json(payload)),"custom_user_id":\#(Dashboard.json(payload)),"device_model":\#(Dashboard.json(payload))}"#
                )
            ).json()
            let deviceUUID = try #require(registered["device_uuid"] as? String)
            let pushed = try await client.execute(
                uri: "/v1/push", method: .post, headers: basic(appUUID, apiKey),
                body: body(#"{"message":{"body":\#(Dashboard.json(payload))},"target":{"devices":["\#(deviceUUID)"]}}"#)
            ).json()
            let receipt = try #require(pushed["receipt_id"] as? String)

            let session = try await Dashboard.signIn(client, harness.adminToken)
            let pagesShown = [
                "/dashboard/apps", "/dashboard/apps/\(appUUID)", "/dashboard/platforms/\(platformUUID)",
                "/dashboard/apps/\(appUUID)/devices",
                "/dashboard/apps/\(appUUID)/devices?q=\(payload.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                "/dashboard/apps/\(appUUID)/devices/\(deviceUUID)", "/dashboard/apps/\(appUUID)/pushes",
                "/dashboard/apps/\(appUUID)/pushes/\(receipt)",
            ]
            for uri in pagesShown {
                let page = try await client.execute(uri: uri, method: .get, headers: Dashboard.cookie(session))
                #expect(page.status == .ok, "\(uri)")
                let html = String(buffer: page.body)
                #expect(!html.contains("<script>alert"), "\(uri) echoes a script tag")
                #expect(!html.contains("<img src=x"), "\(uri) echoes an img tag")
                #expect(
                    html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&lt;img src=x onerror=alert(1)&gt;"),
                    "\(uri) shows the text")
            }
            // A refused form shows what was typed, escaped.
            let csrf = try await Dashboard.csrf(client, session)
            let refused = try await client.execute(
                uri: "/dashboard/apps/\(appUUID)", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": csrf, "name": payload + String(repeating: "x", count: 300), "description": payload]))
            #expect(refused.status == .badRequest)
            let html = String(buffer: refused.body)
            #expect(html.contains("class=\"field-error\""))
            #expect(!html.contains("<script>alert"))
        }
    }

    @Test(arguments: Backend.available)
    func aTenantTokenSeesNothingOfAnotherTenant(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let theirs = try await Fixture.make(harness.store, tenantName: "theirs")
            _ = try await harness.store.devices.register(
                on: theirs.platform,
                try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: theirs.platform.type, requireToken: true))
            let device = try #require(
                try await harness.store.devices.search(applicationID: theirs.app.id, filter: .init(), page: 1, size: 1).devices.first)
            let ours = try #require(try await harness.store.tenants.create(name: "ours"))
            let (_, token) = try await harness.store.adminTokens.create(tenantID: ours.id, name: "ours")
            let session = try await Dashboard.signIn(client, token)

            let list = try await client.execute(uri: "/dashboard/apps", method: .get, headers: Dashboard.cookie(session))
            #expect(!String(buffer: list.body).contains(theirs.app.id.lowercasedString))
            let app = theirs.app.id.lowercasedString
            for uri in [
                "/dashboard/apps/\(app)", "/dashboard/platforms/\(theirs.platform.id.lowercasedString)", "/dashboard/apps/\(app)/devices",
                "/dashboard/apps/\(app)/devices/\(device.uuid.lowercasedString)", "/dashboard/apps/\(app)/pushes",
                "/dashboard/apps/\(app)/logs", "/dashboard/apps/\(app)/logs/download", "/dashboard/apps/\(app)/analytics",
                "/dashboard/apps/\(app)/compose",
            ] {
                let page = try await client.execute(uri: uri, method: .get, headers: Dashboard.cookie(session))
                #expect(page.status == .notFound, "\(uri)")
                #expect(!String(buffer: page.body).contains("test app"))
            }
            // The tenants pages are the root token's.
            let tenants = try await client.execute(uri: "/dashboard/tenants", method: .get, headers: Dashboard.cookie(session))
            #expect(tenants.status == .forbidden)
            #expect(!String(buffer: tenants.body).contains("theirs"))
            let theirTenant = try #require(try await harness.store.tenants.find(name: "theirs"))
            let csrf = try await Dashboard.csrf(client, session)
            let stolen = try await client.execute(
                uri: "/dashboard/tenants/\(theirTenant.id.lowercasedString)/tokens", method: .post, headers: Dashboard.formHeaders(session),
                body: Dashboard.form(["csrf": csrf, "name": "stolen"]))
            #expect(stolen.status == .forbidden)
            #expect(try await harness.store.adminTokens.list(tenantID: theirTenant.id).isEmpty)
            for uri in [
                "/dashboard/apps/\(app)/delete", "/dashboard/apps/\(app)/api_key",
                "/dashboard/platforms/\(theirs.platform.id.lowercasedString)/secret",
                "/dashboard/apps/\(app)/compose",
            ] {
                let refused = try await client.execute(
                    uri: uri, method: .post, headers: Dashboard.formHeaders(session), body: Dashboard.form(["csrf": csrf, "message": "hi"]))
                #expect(refused.status == .notFound, "\(uri)")
            }
            #expect(try await harness.store.applications.authenticate(id: theirs.app.id, apiKey: theirs.apiKey) != nil)
            #expect(try await harness.store.platforms.authenticate(id: theirs.platform.id, secret: theirs.platformSecret) != nil)
        }
    }
}

/// Form requests with a session cookie.
enum Dashboard {
    static var formHeaders: HTTPFields { [.contentType: "application/x-www-form-urlencoded"] }

    static func formHeaders(_ session: String) -> HTTPFields {
        var headers = formHeaders
        headers[.cookie] = "herald_session=\(session)"
        return headers
    }

    static func cookie(_ session: String) -> HTTPFields { [.cookie: "herald_session=\(session)"] }

    static func form(_ fields: [String: String]) -> ByteBuffer {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return ByteBuffer(
            string: fields.map {
                "\($0.key.addingPercentEncoding(withAllowedCharacters: allowed)!)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)"
            }
            .joined(separator: "&"))
    }

    static func json(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
    }

    /// The session id a sign-in answer sets.
    static func session(from response: TestResponse) -> String? {
        guard let cookie = response.headers[.setCookie], cookie.hasPrefix("herald_session=") else { return nil }
        return String(cookie.dropFirst("herald_session=".count).prefix { $0 != ";" })
    }

    static func signIn(_ client: any TestClientProtocol, _ token: String) async throws -> String {
        let response = try await client.execute(uri: "/dashboard/signin", method: .post, headers: formHeaders, body: form(["token": token]))
        return try #require(session(from: response))
    }

    /// The CSRF token a page's forms carry.
    static func csrf(_ html: String) throws -> String {
        guard let range = html.range(of: #"name="csrf" value="([^"]+)""#, options: .regularExpression) else {
            throw TestFailure(message: "no CSRF field on the page")
        }
        return String(html[range].dropFirst(#"name="csrf" value=""#.count).dropLast())
    }

    static func csrf(_ client: any TestClientProtocol, _ session: String) async throws -> String {
        let page = try await client.execute(uri: "/dashboard/apps", method: .get, headers: cookie(session))
        return try csrf(String(buffer: page.body))
    }
}
