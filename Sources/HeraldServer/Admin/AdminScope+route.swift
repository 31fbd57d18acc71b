import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

extension AdminScope {
    /// The application the route's `app` parameter names, if the request's admin token may see
    /// it; not found otherwise (never "forbidden", which would tell it exists). The per-app admin
    /// routes (delivery settings, webhooks, device transfer, activity log) all start here.
    static func application(_ request: Request, _ context: some RequestContext, auth: Authenticator, store: Store) async throws -> App {
        try await scoped(request, context, auth: auth, store: store).app
    }

    /// The request's admin token's scope and the application the route's `app` parameter names
    /// (as `application(_:_:auth:store:)`), for routes that go on through the scope's operations.
    static func scoped(
        _ request: Request, _ context: some RequestContext, auth: Authenticator, store: Store
    ) async throws -> (scope: AdminScope, app: App) {
        let scope = AdminScope(token: try await auth.admin(request), store: store)
        guard let raw = context.parameters.get("app"), let id = UUID(text: raw) else {
            throw APIError.notFound("application")
        }
        return (scope, try await scope.application(id))
    }
}
