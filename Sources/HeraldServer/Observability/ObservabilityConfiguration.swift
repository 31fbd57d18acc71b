import HeraldCore
import Prometheus

/// Where a server's metrics go and what its logs and activity logs may hold.
package struct ObservabilityConfiguration: Sendable {
    /// The registry `/metrics` reads. `herald serve` also bootstraps the process's metrics system
    /// with it; tests give each server its own.
    package var registry: PrometheusCollectorRegistry
    /// `--log-sensitive`: tokens, credentials and bodies may appear in the logs.
    package var logSensitivity: LogSensitivity
    /// `--metrics-public`: `/metrics` answers without the root admin token.
    package var metricsPublic: Bool
    /// Events kept per application for `GET /admin/v1/apps/:app/logs`.
    package var activityLogCapacity: Int
    /// How often an activity stream sends a keep-alive comment (which is also when a client that
    /// went away is noticed).
    package var streamHeartbeat: Duration

    package init(
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), logSensitivity: LogSensitivity = .redacted,
        metricsPublic: Bool = false, activityLogCapacity: Int = 1000, streamHeartbeat: Duration = .seconds(15)
    ) {
        self.registry = registry
        self.logSensitivity = logSensitivity
        self.metricsPublic = metricsPublic
        self.activityLogCapacity = activityLogCapacity
        self.streamHeartbeat = streamHeartbeat
    }
}
