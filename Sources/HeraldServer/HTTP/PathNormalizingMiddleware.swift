import Hummingbird

/// Collapses repeated slashes in the path before routing.
///
/// The PCF Android SDK joins its base URL and `/v1/registration` as strings, so a base URL
/// configured with a trailing slash arrives as `//v1/registration`.
struct PathNormalizingMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let path = request.head.path, path.contains("//") else {
            return try await next(request, context)
        }
        var collapsed = ""
        collapsed.reserveCapacity(path.count)
        var previousSlash = false
        var inQuery = false
        for char in path {
            if char == "?" { inQuery = true }
            if char == "/" && previousSlash && !inQuery { continue }
            previousSlash = char == "/"
            collapsed.append(char)
        }
        var head = request.head
        head.path = collapsed
        return try await next(Request(head: head, body: request.body), context)
    }
}
