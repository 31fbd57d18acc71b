import CoreMetrics
import HeraldCore
import HeraldDelivery
import Prometheus

/// One server's metrics, activity logs, worker status and log sensitivity, made once and handed
/// to the router and the delivery service (no globals).
package struct Observability: Sendable {
    package let configuration: ObservabilityConfiguration
    /// Makes every Herald metric, into `configuration.registry`.
    package let metricsFactory: any MetricsFactory
    /// What the delivery engine reports to (shared with the API: pushes accepted, activity).
    package let delivery: DeliveryTelemetry
    package let http: HTTPMetrics

    package var registry: PrometheusCollectorRegistry { configuration.registry }
    package var activity: ActivityLog { delivery.activity }
    package var logSensitivity: LogSensitivity { configuration.logSensitivity }

    /// - Parameter expectedWorkers: delivery workers this process runs (for `/readyz`).
    package init(_ configuration: ObservabilityConfiguration = ObservabilityConfiguration(), expectedWorkers: Int = 0) {
        self.configuration = configuration
        let factory = Self.metricsFactory(registry: configuration.registry)
        self.metricsFactory = factory
        self.delivery = DeliveryTelemetry(
            metrics: DeliveryMetrics(factory: factory), activity: ActivityLog(capacity: configuration.activityLogCapacity),
            workers: DeliveryWorkerStatus(expected: expectedWorkers), logSensitivity: configuration.logSensitivity)
        self.http = HTTPMetrics(factory: factory)
    }

    /// A Prometheus factory on `registry` with Herald's histogram buckets.
    package static func metricsFactory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[DeliveryMetrics.Name.schedulerLateness] = [
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10),
            .seconds(30), .seconds(60), .seconds(300),
        ]
        return factory
    }
}
