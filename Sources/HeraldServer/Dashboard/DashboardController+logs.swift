import HeraldCore
import HeraldStore
import Hummingbird

/// Logs: the application's activity, live, and as a file to download (Pivotal's Logs page).
extension DashboardController {
    @Sendable func logsPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let view: [String: Any] = [
                "app": ["uuid": app.id.lowercasedString],
                "lines": activity.recent(app.id).map(\.line),
            ]
            return pages.page("logs", view, layout: try await layout(signed, title: "Logs", app: app))
        }
    }

    /// The same file as `GET /admin/v1/apps/:uuid/logs`.
    @Sendable func downloadLogs(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            return ActivityLogController<Context>.download(app, activity: activity)
        }
    }

    /// The same events as `GET /admin/v1/apps/:uuid/logs/stream`.
    @Sendable func logEvents(_ request: Request, context: Context) async throws -> Response {
        guard let signed = try await signedIn(request) else { throw APIError.unauthorized("sign in first", scheme: "Cookie") }
        let app = try await signed.scope.application(try Self.id(context, "app", "application"))
        return ActivityLogController<Context>.stream(app, activity: activity, heartbeat: heartbeat)
    }
}
