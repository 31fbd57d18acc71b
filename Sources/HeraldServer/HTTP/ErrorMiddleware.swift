import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// Turns every error a route throws into the JSON error shape, with the right status.
///
/// Validation and HTTP errors keep their meaning; a database that cannot be reached is a 503; a
/// write that lost a race with another change (a foreign key or unique key the database
/// refused) is a 409; only what nothing anticipated becomes a 500, logged with the request id.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as ValidationError {
            throw APIError(error)
        } catch let error as HTTPError {
            throw Self.apiError(error)
        } catch let error as StoreError where error.reason == .unavailable {
            context.logger.error("database unavailable", metadata: ["error": "\(error)"])
            throw APIError(.serviceUnavailable, code: "unavailable", message: "the database is unavailable; try again")
        } catch let error as StoreError where error.reason == .foreignKeyViolation || error.reason == .uniqueViolation {
            // A change that raced another request (another process's delete of a platform it
            // had still cached as valid, two creations of one thing at once): the request was
            // sound, the state it counted on went away.
            context.logger.info("write conflicted with a concurrent change", metadata: ["error": "\(error)"])
            throw APIError.conflict("something this request refers to was changed or deleted at the same moment; read it again and retry")
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(.internalServerError, code: "internal", message: "an unexpected error occurred; it has been logged")
        }
    }

    static func apiError(_ error: HTTPError) -> APIError {
        switch error.status {
        case .contentTooLarge:
            return APIError(
                .contentTooLarge, code: "body_too_large", message: "the request body is larger than \(Limits.requestBodyBytes) bytes")
        case .notFound:
            return APIError(.notFound, code: "not_found", message: error.body ?? "no such route")
        case .methodNotAllowed:
            return APIError(.methodNotAllowed, code: "method_not_allowed", message: error.body ?? "method not allowed")
        default:
            return APIError(error.status, code: "http_\(error.status.code)", message: error.body ?? error.status.reasonPhrase)
        }
    }
}
