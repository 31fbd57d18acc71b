import Hummingbird
import Logging

/// One info line per request — method, route pattern, status, duration — and the request
/// metrics. The path, the query, the headers and the body are not logged: they can hold
/// device tokens and credentials.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: HTTPMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            finish(request, context, status: response.status.code, start: start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            finish(request, context, status: status, start: start)
            throw error
        }
    }

    private func finish(_ request: Request, _ context: Context, status: Int, start: ContinuousClock.Instant) {
        let duration = ContinuousClock.now - start
        let route = context.endpointPath ?? "NotFound"
        let method = request.method.rawValue
        metrics.record(method: method, route: route, status: status, duration: duration)
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        context.logger.info(
            "request",
            metadata: [
                "method": .string(method), "route": .string(route), "status": .stringConvertible(status),
                "duration_ms": .stringConvertible((milliseconds * 100).rounded() / 100),
            ])
    }
}
