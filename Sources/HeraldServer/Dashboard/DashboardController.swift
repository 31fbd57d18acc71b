import HeraldCore
import HeraldDelivery
import HeraldStore
import Hummingbird
import NIOCore

import struct Foundation.Date
import struct Foundation.UUID

/// `/dashboard`: the operator's web console, server-rendered HTML (docs/DASHBOARD.md).
///
/// An operator signs in with an admin token and gets a session cookie; every page then acts
/// through `AdminScope`, exactly as the admin API does with that token, so a tenant's token
/// sees only its tenant and the dashboard has no authorization of its own. Every
/// state-changing form carries the session's CSRF token.
struct DashboardController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let pages: DashboardPages
    let sessions: DashboardSessions
    let throttle: SignInThrottle
    /// Test pushes go through the same acceptance as `POST /v1/push`.
    let pushes: PushController<Context>
    /// The locations operations `/v1/locations` uses (with its geofence update policy).
    let locations: Locations
    /// For a platform's last credentials rejection.
    let activity: ActivityLog
    let clock: EpochClock
    /// A comment line on the logs' event stream this often (as the admin API's stream).
    let heartbeat: Duration
    /// How often a live push page's event stream reads the push's counters.
    var livePoll: Duration = .milliseconds(250)
    /// A live push stream ends after this long even if the push is not done (the page says to reload).
    var liveLimit: Duration = .seconds(600)
    /// The tile server the map draws on; nil: a plain background.
    var mapTiles: DashboardMapTiles? = nil

    static var cookieName: String { "herald_session" }

    func addRoutes(to router: Router<Context>) {
        let dashboard = router.group("dashboard").add(middleware: DashboardHeadersMiddleware(imageOrigin: mapTiles?.origin))
        dashboard.get(use: home)
        dashboard.get("static/:file", use: staticFile)
        dashboard.get("vendor/:file", use: vendorFile)
        dashboard.get("signin", use: signInPage)
        dashboard.post("signin", use: signIn)
        dashboard.post("signout", use: signOut)
        dashboard.get("go", use: go)
        // Applications
        dashboard.get("apps", use: applicationsPage)
        dashboard.post("apps", use: createApplication)
        dashboard.get("apps/:app", use: applicationPage)
        dashboard.post("apps/:app", use: updateApplication)
        dashboard.post("apps/:app/delete", use: deleteApplication)
        dashboard.post("apps/:app/api_key", use: regenerateAPIKey)
        dashboard.post("apps/:app/delivery", use: updateDeliverySettings)
        // Platforms
        dashboard.post("apps/:app/platforms", use: createPlatform)
        dashboard.get("platforms/:platform", use: platformPage)
        dashboard.post("platforms/:platform", use: updatePlatform)
        dashboard.post("platforms/:platform/delete", use: deletePlatform)
        dashboard.post("platforms/:platform/secret", use: regenerateSecret)
        // Devices
        dashboard.get("apps/:app/devices", use: devicesPage)
        dashboard.get("apps/:app/devices/:device", use: devicePage)
        dashboard.post("apps/:app/devices/:device/badge", use: resetBadge)
        dashboard.post("apps/:app/devices/:device/quiet_time", use: updateDeviceQuietTime)
        // Pushes
        dashboard.get("apps/:app/pushes", use: pushesPage)
        dashboard.get("apps/:app/pushes/:push", use: pushPage)
        dashboard.get("apps/:app/pushes/:push/events", use: pushEvents)
        // The push composer
        dashboard.get("apps/:app/compose", use: composePage)
        dashboard.post("apps/:app/compose", use: compose)
        // Logs
        dashboard.get("apps/:app/logs", use: logsPage)
        dashboard.get("apps/:app/logs/download", use: downloadLogs)
        dashboard.get("apps/:app/logs/stream", use: logEvents)
        // Analytics
        dashboard.get("apps/:app/analytics", use: analyticsPage)
        // Schedules
        dashboard.get("apps/:app/schedules", use: schedulesPage)
        dashboard.post("apps/:app/schedules/:schedule", use: rescheduleSchedule)
        dashboard.post("apps/:app/schedules/:schedule/cancel", use: cancelSchedule)
        dashboard.post("apps/:app/schedules/:schedule/pause", use: pauseSchedule)
        dashboard.post("apps/:app/schedules/:schedule/resume", use: resumeSchedule)
        // Topics
        dashboard.get("apps/:app/topics", use: topicsPage)
        dashboard.post("apps/:app/topics", use: createTopic)
        dashboard.post("apps/:app/topics/:topic/delete", use: deleteTopic)
        // Locations, location groups and geofences
        dashboard.get("apps/:app/locations", use: locationsPage)
        dashboard.post("apps/:app/locations", use: createLocation)
        dashboard.get("apps/:app/locations/:location", use: locationPage)
        dashboard.post("apps/:app/locations/:location", use: updateLocation)
        dashboard.post("apps/:app/locations/:location/delete", use: deleteLocation)
        dashboard.post("apps/:app/location_groups", use: createLocationGroup)
        dashboard.get("apps/:app/location_groups/:group", use: locationGroupPage)
        dashboard.post("apps/:app/location_groups/:group", use: updateLocationGroup)
        dashboard.post("apps/:app/location_groups/:group/delete", use: deleteLocationGroup)
        dashboard.get("apps/:app/geofences/:geofence", use: geofencePage)
        dashboard.post("apps/:app/geofences/:geofence", use: updateGeofence)
        dashboard.post("apps/:app/geofences/:geofence/delete", use: deleteGeofence)
        // Tenants and tokens (root only)
        dashboard.get("tenants", use: tenantsPage)
        dashboard.post("tenants", use: createTenant)
        dashboard.get("tenants/:tenant", use: tenantPage)
        dashboard.post("tenants/:tenant/tokens", use: createToken)
        dashboard.post("tenants/:tenant/tokens/:token/delete", use: deleteToken)
        // Every other GET under /dashboard gets the dashboard's own "Not found" page: a middleware
        // around the router's not-found answer (added after the routes, it wraps nothing else).
        router.add(middleware: DashboardNotFoundMiddleware(dashboard: self))
    }

    // MARK: Signed-in requests

    /// A request from a signed-in operator: the session and the admin API's scope for its token.
    struct SignedIn {
        let id: String
        let session: DashboardSessions.Session
        let scope: AdminScope
    }

    /// The session the request's cookie names, if it is live and its token still valid.
    func signedIn(_ request: Request) async throws -> SignedIn? {
        guard let id = request.cookies[Self.cookieName]?.value, let session = sessions.find(id) else { return nil }
        guard let token = try? await auth.admin(token: session.token) else {
            sessions.close(id)
            return nil
        }
        return SignedIn(id: id, session: session, scope: AdminScope(token: token, store: store))
    }

    /// Runs `body` for a signed-in operator; otherwise sends the browser to the sign-in page.
    /// An `APIError` becomes a page saying what went wrong, with its status.
    func page(_ request: Request, _ body: (SignedIn) async throws -> Response) async throws -> Response {
        guard let signed = try await signedIn(request) else { return Self.signInRedirect(request) }
        do {
            return try await body(signed)
        } catch {
            guard let refusal = Self.refusal(error) else { throw error }
            return try await errorPage(refusal, signed)
        }
    }

    /// A state-changing form: signed in, and its `csrf` field must be the session's token
    /// (compared in constant time). Without it nothing is done: 403.
    func action(
        _ request: Request, _ body: (SignedIn, [String: String]) async throws -> Response
    ) async throws -> Response {
        guard let signed = try await signedIn(request) else { return Self.redirect("/dashboard/signin") }
        let form = try await Self.form(request)
        guard let sent = form["csrf"], Secret.constantTimeEquals(Array(sent.utf8), Array(signed.session.csrf.utf8)) else {
            return try await errorPage(
                APIError(
                    .forbidden, code: "csrf",
                    message: "This form has expired or did not come from this dashboard; reload the page and try again."),
                signed)
        }
        do {
            return try await body(signed, form)
        } catch {
            guard let refusal = Self.refusal(error) else { throw error }
            return try await errorPage(refusal, signed)
        }
    }

    /// The page for an error that is not about one form's field.
    func errorPage(_ error: APIError, _ signed: SignedIn) async throws -> Response {
        let title =
            switch error.status {
            case .notFound: "Not found"
            case .forbidden: "Not allowed"
            case .badRequest: "Not accepted"
            case .conflict: "Not possible now"
            default: "Something went wrong"
            }
        return pages.page(
            "error", ["message": error.message], layout: try await layout(signed, title: title), status: error.status)
    }

    /// Any other address under `/dashboard`: the dashboard's own "Not found" page (signed in),
    /// or the sign-in page, rather than the API's JSON.
    func notFoundPage(_ request: Request) async throws -> Response {
        try await page(request) { _ in
            throw APIError(.notFound, code: "not_found", message: "There is no dashboard page at this address.")
        }
    }

    // MARK: Layout

    /// The layout's values: the application picker (with `app` selected), the CSRF token, who is signed in.
    /// `apps`: the token's applications when the page has read them already.
    func layout(_ signed: SignedIn, title: String, app: App? = nil, apps: [App]? = nil) async throws -> [String: Any] {
        let apps = if let apps { apps } else { try await signed.scope.applications() }
        var layout: [String: Any] = [
            "title": title, "signedIn": true, "csrf": signed.session.csrf,
            "who": signed.scope.isRoot ? "root token" : "tenant token “\(signed.scope.token.name)”", "isRoot": signed.scope.isRoot,
            "apps": apps.map { ["uuid": $0.id.lowercasedString, "name": $0.name, "selected": $0.id == app?.id] as [String: Any] },
        ]
        if let app { layout["currentApp"] = ["uuid": app.id.lowercasedString, "name": app.name] }
        return layout
    }

    // MARK: Helpers

    /// The form fields of a urlencoded body (at most `Limits.requestBodyBytes`).
    static func form(_ request: Request) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: Limits.requestBodyBytes)
        guard body.readableBytes > 0 else { return [:] }
        do {
            return try URLEncodedFormDecoder().decode([String: String].self, from: String(buffer: body))
        } catch {
            throw APIError.badRequest("the form could not be read")
        }
    }

    /// 303 to `location` (after a form, the browser GETs it).
    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    /// What the admin API would answer for `error`, when it is a refusal (`APIError`, or a
    /// `ValidationError` as `ErrorMiddleware` turns it into one); anything else stays an error.
    static func refusal(_ error: any Error) -> APIError? {
        switch error {
        case let error as APIError: error
        case let error as ValidationError: APIError(error)
        default: nil
        }
    }

    /// A refusal of what a form says (400, 403 or 409), shown next to the form's fields; a
    /// missing application or platform is not one of those and gets the error page.
    static func formRefusal(_ error: any Error) -> APIError? {
        guard let refusal = refusal(error), [.badRequest, .forbidden, .conflict].contains(refusal.status) else { return nil }
        return refusal
    }

    /// A uuid from the path; not found otherwise.
    static func id(_ context: Context, _ name: String, _ what: String) throws -> UUID {
        guard let raw = context.parameters.get(name), let id = UUID(text: raw) else { throw APIError.notFound(what) }
        return id
    }

    /// An API error's field as a template key (`credentials.p8` → `credentials_p8`); `any` when it names none.
    static func errors(_ error: APIError) -> [String: String] {
        [(error.field ?? "any").replacing(".", with: "_"): error.message]
    }

    /// Epoch milliseconds as an ISO 8601 time (`2040-01-01T10:00:00Z`). A format style, a cheap
    /// value, rather than an `ISO8601DateFormatter`, which is costly to make: a page calls this
    /// once per row (50 pushes, 48 analytics buckets).
    static func time(_ millis: Int64) -> String {
        Date(timeIntervalSince1970: Double(millis) / 1000).formatted(Date.ISO8601FormatStyle())
    }
}
