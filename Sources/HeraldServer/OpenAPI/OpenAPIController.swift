import Hummingbird
import NIOCore

/// `GET /openapi.json`, unauthenticated: Herald's OpenAPI 3.1 document.
///
/// The document is written by hand in `OpenAPI/openapi.json` and compiled into the binary, so
/// it is served as stored: nothing is generated on any request path. `OpenAPIRouteTests` keeps
/// its paths equal to the router's routes, and `scripts/test-contract` checks the server's
/// answers against it on both backends.
struct OpenAPIController<Context: RequestContext>: Sendable {
    /// The document's bytes; a computed property because a generic type cannot hold a static
    /// stored one, so `addRoutes` takes it once and every request shares that buffer.
    static var document: ByteBuffer { ByteBuffer(bytes: PackageResources.openapi_json) }

    func addRoutes(to router: Router<Context>) {
        let document = Self.document
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "public, max-age=300"],
                body: .init(byteBuffer: document))
        }
    }
}
