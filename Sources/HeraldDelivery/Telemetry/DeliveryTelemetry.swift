import HeraldCore

/// What the delivery engine reports to besides its logger: metrics, each application's activity
/// log, the open provider connections and the workers' status. Injected; the defaults record
/// nothing anywhere shared.
package struct DeliveryTelemetry: Sendable {
    package var metrics: DeliveryMetrics
    package var activity: ActivityLog
    package var connections: ProviderConnections
    package var workers: DeliveryWorkerStatus
    /// Whether the engine's logs may carry tokens and provider error texts as they are.
    package var logSensitivity: LogSensitivity

    package init(
        metrics: DeliveryMetrics = DeliveryMetrics(), activity: ActivityLog = ActivityLog(),
        connections: ProviderConnections = ProviderConnections(), workers: DeliveryWorkerStatus = DeliveryWorkerStatus(expected: 0),
        logSensitivity: LogSensitivity = .redacted
    ) {
        self.metrics = metrics
        self.activity = activity
        self.connections = connections
        self.workers = workers
        self.logSensitivity = logSensitivity
    }
}
