import HTTPTypes
import Hummingbird

/// A GET under `/dashboard/` that no route serves gets the dashboard's own "Not found" page
/// (with its navigation and security headers), not the API's JSON error. Added to the router
/// after the dashboard's routes, so it wraps the router's not-found answer and nothing routed.
struct DashboardNotFoundMiddleware<Context: RequestContext>: RouterMiddleware {
    let dashboard: DashboardController<Context>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get, request.uri.path.hasPrefix("/dashboard/") else { return try await next(request, context) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return try await DashboardHeadersMiddleware<Context>(imageOrigin: dashboard.mapTiles?.origin).handle(request, context: context)
            {
                request, _ in try await dashboard.notFoundPage(request)
            }
        }
    }
}
