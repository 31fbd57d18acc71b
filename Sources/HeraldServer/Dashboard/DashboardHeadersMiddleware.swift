import HTTPTypes
import Hummingbird

/// The dashboard's security headers on every answer under `/dashboard`: scripts, styles and
/// everything else only from this host (so an injected tag could not load or run anything),
/// no framing, no MIME sniffing, no referrer to other sites.
struct DashboardHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The Content-Security-Policy, written once: images may also come from `imageOrigin`, where
    /// map tiles come from when the operator configured a tile server (`DashboardMapTiles.origin`).
    let contentSecurityPolicy: String

    init(imageOrigin: String? = nil) {
        contentSecurityPolicy =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:\(imageOrigin.map { " " + $0 } ?? ""); connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        return response
    }
}
