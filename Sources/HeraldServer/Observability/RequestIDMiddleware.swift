import HTTPTypes
import HeraldCore
import Hummingbird
import Logging
import Synchronization

/// Gives each request an id: the client's `X-Request-Id` when it is sane (1 to 128 token
/// characters), a new one otherwise. The id goes into the request's logger metadata
/// (`request_id`) and back in the response's `X-Request-Id`, error answers included.
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    static var headerName: HTTPField.Name { HTTPField.Name("X-Request-Id")! }

    /// New ids: this process's random prefix and a count, unique without a random draw (and a
    /// system call) per request.
    private let ids = RequestIDs()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = request.headers[Self.headerName].flatMap { Self.isSane($0) ? $0 : nil } ?? ids.next()
        var context = context
        // Both keys in one change: each change of a handler's metadata re-renders all of it.
        // Hummingbird's own id (`context.id`) names the same request.
        var metadata = context.logger.handler.metadata
        metadata["request_id"] = .string(id)
        metadata["hb.request.id"] = .string(id)
        context.logger.handler.metadata = metadata
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Answered here rather than by the server, so that the error carries the id too.
            response = try error.response(from: request, context: context)
        }
        response.headers[Self.headerName] = id
        return response
    }

    /// At most 128 characters, each an HTTP token character (RFC 9110).
    static func isSane(_ value: String) -> Bool {
        guard (1...128).contains(value.utf8.count) else { return false }
        return value.utf8.allSatisfy(HTTPToken.isTokenCharacter)
    }
}

/// Request ids for one process: 16 random hex digits drawn at start, a dash, and a count in hex.
final class RequestIDs: Sendable {
    private let prefix: String
    private let count = Atomic<UInt64>(0)

    init() {
        var generator = SystemRandomNumberGenerator()
        let random = String(generator.next() as UInt64, radix: 16)
        prefix = String(repeating: "0", count: 16 - random.count) + random
    }

    func next() -> String {
        let number = count.add(1, ordering: .relaxed).newValue
        return prefix + "-" + String(number, radix: 16)
    }
}
