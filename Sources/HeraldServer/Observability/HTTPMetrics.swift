import CoreMetrics

/// The API's request metrics, by the router's route pattern (not the raw path, which would
/// make one series per device) and status.
public struct HTTPMetrics: Sendable {
    public enum Name {
        public static let requests = "herald_http_requests_total"
        public static let duration = "herald_http_request_duration_seconds"
    }

    public let factory: any MetricsFactory

    public init(factory: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.factory = factory
    }

    /// One answered request.
    public func record(method: String, route: String, status: Int, duration: Duration) {
        Counter(label: Name.requests, dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory)
            .increment()
        let (seconds, attoseconds) = duration.components
        Timer(label: Name.duration, dimensions: [("method", method), ("route", route)], factory: factory)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
