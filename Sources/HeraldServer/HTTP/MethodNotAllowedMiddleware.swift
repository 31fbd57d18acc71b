import Hummingbird

/// Answers 405 with `Allow` for a path the router serves, asked with a method it does not serve
/// there (Hummingbird's router answers such requests as not found).
///
/// Added to the router after every route, so it wraps only the not-found responder: a request
/// that matched a route never reaches it. A path matches a route as the router's trie matches:
/// segment by segment, a literal segment before a parameter (`/v1/registration/count` is not
/// `/v1/registration/{device_uuid}`).
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Each routed path's segments (nil for a parameter) and its methods.
    private let paths: [(segments: [Substring?], methods: [String])]

    init(routes: [(path: String, method: HTTPRequest.Method)]) {
        var methods: [String: Set<String>] = [:]
        for route in routes { methods[route.path, default: []].insert(route.method.rawValue) }
        paths = methods.map { path, methods in
            let segments = path.split(separator: "/").map { $0.hasPrefix("{") || $0.hasPrefix(":") ? nil : $0 }
            return (segments, methods.sorted())
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let allowed = allowedMethods(request.uri.path) else {
            return try await next(request, context)
        }
        throw APIError(
            .methodNotAllowed, code: "method_not_allowed", message: "\(request.method.rawValue) is not served here; use \(allowed)",
            headers: [.allow: allowed])
    }

    /// The methods of the most specific routed path matching `path`, as an `Allow` value.
    func allowedMethods(_ path: String) -> String? {
        let requested = path.split(separator: "/")
        var best: (literals: [Bool], methods: [String])?
        for candidate in paths where candidate.segments.count == requested.count {
            guard zip(candidate.segments, requested).allSatisfy({ $0 == nil || $0 == $1 }) else { continue }
            let literals = candidate.segments.map { $0 != nil }
            if let current = best, !Self.moreSpecific(literals, than: current.literals) { continue }
            best = (literals, candidate.methods)
        }
        return best.map { $0.methods.joined(separator: ", ") }
    }

    /// Whether a path with these literal segments wins over another: the first segment where
    /// they differ is a literal in it.
    static func moreSpecific(_ lhs: [Bool], than rhs: [Bool]) -> Bool {
        for (left, right) in zip(lhs, rhs) where left != right { return left }
        return false
    }
}
