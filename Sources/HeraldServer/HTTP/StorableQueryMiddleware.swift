import HeraldCore
import Hummingbird

/// Refuses a query parameter whose value holds a NUL character (`?topic=a%00b`) with a 400
/// naming it, before any route reads it: the same rule as for body text
/// (`String.requireStorable`), so no parameter reaches a PostgreSQL comparison (which fails on a
/// NUL) or matches differently on SQLite. Names are not percent-decoded, so only values can hold
/// one. Requests without a query pass straight through.
struct StorableQueryMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.query != nil {
            for (name, value) in request.uri.queryParameters {
                try String(value).requireStorable(field: String(name))
            }
        }
        return try await next(request, context)
    }
}
