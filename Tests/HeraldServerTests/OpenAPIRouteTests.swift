import Foundation
import HeraldServer
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// The OpenAPI document (`GET /openapi.json`) and the router describe the same operations.
@Suite struct OpenAPIRouteTests {
    /// Paths the router serves that are not part of the API contract, by prefix: the HTML
    /// dashboard (`/dashboard` and below) is pages for people, not an API. Nothing else may be
    /// left out of the document.
    static let undocumentedPrefixes = ["/dashboard"]

    @Test(arguments: Backend.available)
    func everyRouteIsDocumentedAndEveryDocumentedOperationIsRouted(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let router = buildRouter(store: db.store)
            let routed = Set(
                router.routes
                    .map { "\($0.method.rawValue) \(Self.normalized($0.path.description))" }
                    .filter { route in
                        let path = route.split(separator: " ", maxSplits: 1)[1]
                        return !Self.undocumentedPrefixes.contains { path == $0 || path.hasPrefix($0 + "/") }
                    })
            let documented = try await Self.documentedOperations(router)
            #expect(routed.subtracting(documented).sorted() == [], "routes missing from the OpenAPI document")
            #expect(documented.subtracting(routed).sorted() == [], "documented operations the router does not serve")
            #expect(routed.count > 60)
        }
    }

    /// A routed path asked with a method it does not serve answers 405 with `Allow` (as the
    /// document says), and the most specific path decides: `/v1/registration/count` is not
    /// `/v1/registration/{device_uuid}`. An unrouted path stays 404.
    @Test func aWrongMethodAnswers405WithAllow() async throws {
        try await ServerHarness.run(.sqlite) { _, client in
            let version = try await client.execute(uri: "/v1/version", method: .delete)
            #expect(version.status == .methodNotAllowed)
            #expect(version.headers[.allow] == "GET")
            #expect(try version.json()["error"].flatMap { ($0 as? [String: Any])?["code"] as? String } == "method_not_allowed")
            let device = try await client.execute(uri: "/v1/registration/9a0e5a5c-1c7e-4a43-9d1e-5d9ab6f5c2e1", method: .post)
            #expect(device.status == .methodNotAllowed)
            #expect(
                device.headers[.allow].map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
                    == ["DELETE", "GET", "PUT"])
            #expect(try await client.execute(uri: "/v1/nowhere", method: .delete).status == .notFound)
        }
    }

    @Test func theDocumentIsServedWithoutCredentials() async throws {
        try await ServerHarness.run(.sqlite) { _, client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            let document = try response.json()
            #expect(document["openapi"] as? String == "3.1.0")
            let schemes = (document["components"] as? [String: Any])?["securitySchemes"] as? [String: Any]
            #expect(Set(schemes?.keys.map { $0 } ?? []) == ["platformBasic", "appBasic", "adminBearer"])
        }
    }

    /// The answers every JSON route gives besides its own are in the document: 415 for a body
    /// declared as another media type (`Request.decodeJSON`), and 405 with `Allow`
    /// (`MethodNotAllowedMiddleware`).
    @Test func theDocumentStates415And405() async throws {
        try await ServerHarness.run(.sqlite) { _, client in
            let document = try await client.execute(uri: "/openapi.json", method: .get).json()
            let components = try #require(document["components"] as? [String: Any])
            let responses = try #require(components["responses"] as? [String: Any])
            let allow = ((responses["MethodNotAllowed"] as? [String: Any])?["headers"] as? [String: Any])?["Allow"]
            #expect(allow != nil, "the 405 answer and its Allow header")
            #expect(responses["UnsupportedMediaType"] != nil)
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            var withoutMediaTypeAnswer: [String] = []
            for (path, item) in paths {
                for (method, value) in item {
                    guard let operation = value as? [String: Any],
                        let content = (operation["requestBody"] as? [String: Any])?["content"] as? [String: Any],
                        content["application/json"] != nil,
                        // The device import reads NDJSON or one JSON line, whatever the Content-Type.
                        operation["operationId"] as? String != "importApplicationDevices"
                    else { continue }
                    if (operation["responses"] as? [String: Any])?["415"] == nil {
                        withoutMediaTypeAnswer.append("\(method.uppercased()) \(path)")
                    }
                }
            }
            #expect(withoutMediaTypeAnswer.sorted() == [], "JSON bodies whose 415 is not documented")
        }
    }

    /// `METHOD /path` for every operation of the served document.
    static func documentedOperations(_ router: Router<HeraldRequestContext>) async throws -> Set<String> {
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.router) { client in
            var operations = Set<String>()
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            let paths = try #require(try response.json()["paths"] as? [String: [String: Any]])
            let methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
            for (path, item) in paths {
                for method in methods where item[method] != nil {
                    operations.insert("\(method.uppercased()) \(normalized(path))")
                }
            }
            return operations
        }
    }

    /// A path with its parameters written `{name}`, whichever of `{name}` or `:name` it used.
    static func normalized(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
    }
}
