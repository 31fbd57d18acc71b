import CoreMetrics
import HeraldCore

/// The delivery engine's metrics, made through an injected `MetricsFactory` (never the global
/// one), so that each server, and each test, counts into its own registry.
///
/// Names and labels are listed in docs/OBSERVABILITY.md; a metric name always comes with the
/// same label names.
package struct DeliveryMetrics: Sendable {
    /// Metric names, for readers of the registry (tests, dashboards).
    package enum Name {
        package static let pushesAccepted = "herald_pushes_accepted_total"
        package static let notificationsSent = "herald_notifications_sent_total"
        package static let notificationsDelivered = "herald_notifications_delivered_total"
        package static let notificationsFailed = "herald_notifications_failed_total"
        package static let providerLatency = "herald_provider_latency_seconds"
        package static let providerInFlight = "herald_provider_requests_in_flight"
        package static let providerConnections = "herald_provider_connections"
        package static let queueDepth = "herald_queue_depth"
        package static let queueOldestAge = "herald_queue_oldest_job_age_seconds"
        package static let workersRunning = "herald_delivery_workers_running"
        package static let schedulerLateness = "herald_scheduler_lateness_seconds"
    }

    package let factory: any MetricsFactory

    /// - Parameter factory: where the metrics go; the default counts nothing.
    package init(factory: any MetricsFactory = NOOPMetricsHandler.instance) {
        self.factory = factory
    }

    /// The API accepted a push (or a scheduled one became due and was queued).
    package func pushAccepted(count: Int = 1) {
        Counter(label: Name.pushesAccepted, factory: factory).increment(by: count)
    }

    /// What came of `sent` notifications given to `provider` in one round of a batch: the
    /// delivered ones, and the others by reason (retried ones included: each attempt counts).
    func recordOutcomes(provider: String, sent: Int, delivered: Int, failures: [String: Int]) {
        let dimensions = [("provider", provider)]
        if sent > 0 { Counter(label: Name.notificationsSent, dimensions: dimensions, factory: factory).increment(by: sent) }
        if delivered > 0 { Counter(label: Name.notificationsDelivered, dimensions: dimensions, factory: factory).increment(by: delivered) }
        for (reason, count) in failures where count > 0 {
            Counter(label: Name.notificationsFailed, dimensions: [("provider", provider), ("reason", reason)], factory: factory)
                .increment(by: count)
        }
    }

    /// Devices that failed before any request (no credentials, a payload the platform cannot take).
    func recordUnsent(provider: String, reason: String, count: Int) {
        guard count > 0 else { return }
        Counter(label: Name.notificationsFailed, dimensions: [("provider", provider), ("reason", reason)], factory: factory)
            .increment(by: count)
    }

    /// How long a provider took to answer: one request (FCM, Web Push, WNS) or one batch
    /// multiplexed on HTTP/2 (APNs, where the batch waits for its slowest answer).
    func recordLatency(provider: String, _ duration: Duration) {
        Timer(label: Name.providerLatency, dimensions: [("provider", provider)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
    }

    /// Requests being sent to `provider` went up (positive) or down (negative) by `delta`.
    func inFlight(provider: String, _ delta: Int) {
        let meter = Meter(label: Name.providerInFlight, dimensions: [("provider", provider)], factory: factory)
        if delta >= 0 { meter.increment(by: Double(delta)) } else { meter.decrement(by: Double(-delta)) }
    }

    /// Open connections to `provider` right now.
    package func providerConnections(provider: String, _ count: Int) {
        Gauge(label: Name.providerConnections, dimensions: [("provider", provider)], factory: factory).record(count)
    }

    /// The queue right now: jobs due or being worked, and how long the oldest due one has waited.
    package func queue(depth: Int, oldestAge: Duration) {
        Gauge(label: Name.queueDepth, factory: factory).record(depth)
        Gauge(label: Name.queueOldestAge, factory: factory).record(oldestAge.seconds)
    }

    /// Delivery workers running in this process right now.
    package func workersRunning(_ count: Int) {
        Gauge(label: Name.workersRunning, factory: factory).record(count)
    }

    /// How late a scheduled push was queued: the time it was queued minus the time it was due.
    /// For the scheduler; a negative lateness (early) is recorded as 0.
    package func schedulerLateness(_ lateness: Duration) {
        Timer(label: Name.schedulerLateness, factory: factory).recordNanoseconds(max(0, lateness.nanoseconds))
    }

    /// The provider a platform type is delivered by, as the metrics and the activity log name it.
    package static func provider(for type: PlatformType) -> String {
        switch type {
        case .ios: "apns"
        case .android: "fcm"
        case .web: "webpush"
        case .windows: "wns"
        }
    }
}

extension DeliveryMetrics {
    /// Runs `body`, `requests` requests to `provider`, counting them in flight meanwhile and
    /// recording how long they took.
    func measured<Result>(provider: String, requests: Int = 1, _ body: () async -> Result) async -> Result {
        inFlight(provider: provider, requests)
        let start = ContinuousClock.now
        let result = await body()
        recordLatency(provider: provider, ContinuousClock.now - start)
        inFlight(provider: provider, -requests)
        return result
    }
}

extension DeliveryMetrics {
    /// A failure reason as a label value: the provider's reason code as it is, anything that does
    /// not look like one (a long error text) as `Other`, so that the label set stays small.
    package static func reasonLabel(_ reason: String) -> String {
        let allowed = reason.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x28 || byte == 0x29 || byte == 0x2E || byte == 0x2D
        }
        return allowed && !reason.isEmpty && reason.utf8.count <= 64 ? reason : "Other"
    }
}
