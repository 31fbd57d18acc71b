import CoreMetrics
import Synchronization

/// The API's request metrics, by the router's route pattern (not the raw path, which would
/// make one series per device) and status.
package struct HTTPMetrics: Sendable {
    package enum Name {
        package static let requests = "herald_http_requests_total"
        package static let duration = "herald_http_request_duration_seconds"
    }

    package let factory: any MetricsFactory
    private let series: SeriesCache

    package init(factory: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.factory = factory
        self.series = SeriesCache(factory: factory)
    }

    /// One answered request.
    package func record(method: String, route: String, status: Int, duration: Duration) {
        let (requests, durations) = series.metrics(method: method, route: route, status: status)
        requests.increment()
        let (seconds, attoseconds) = duration.components
        durations.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// The counter and timer of each (method, route, status) seen, made once by `factory` rather
/// than looked up in its registry on every request.
private final class SeriesCache: Sendable {
    private let factory: any MetricsFactory
    struct Key: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    /// Routes are the router's patterns, but methods are whatever clients send: past this many
    /// series the metrics are still recorded, just not kept here.
    static let capacity = 1024

    private let entries = Mutex<[Key: (Counter, Timer)]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    func metrics(method: String, route: String, status: Int) -> (Counter, Timer) {
        let key = Key(method: method, route: route, status: status)
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let made = (
            Counter(
                label: HTTPMetrics.Name.requests, dimensions: [("method", method), ("route", route), ("status", String(status))],
                factory: factory),
            Timer(label: HTTPMetrics.Name.duration, dimensions: [("method", method), ("route", route)], factory: factory)
        )
        entries.withLock { entries in
            if entries.count < Self.capacity { entries[key] = made }
        }
        return made
    }
}
