import HeraldCore
import HeraldStore

import struct Foundation.UUID

extension DeliveryTelemetry {
    /// The API accepted a push: counted, and told to the app's activity log.
    package func pushAccepted(_ pushID: UUID, applicationID: UUID, scheduledAt: Int64?, time: Int64) {
        metrics.pushAccepted()
        let message = scheduledAt.map { "push accepted, due at \($0)" } ?? "push accepted"
        activity.record(ActivityEvent(time: time, kind: .pushAccepted, pushID: pushID, message: message), applicationID: applicationID)
    }

    /// One round of sends to `provider` answered: the outcomes, counted by kind and reason.
    func recordRound(provider: String, _ outcomes: [DeliveryOutcome]) {
        var delivered = 0
        var failures: [String: Int] = [:]
        var sent = 0
        for outcome in outcomes {
            switch outcome {
            case .notAttempted: continue
            case .delivered: delivered += 1
            case .gone: failures["DeviceGone", default: 0] += 1
            case .retry(let reason, _), .credentialsRejected(let reason), .failed(let reason):
                failures[DeliveryMetrics.reasonLabel(reason), default: 0] += 1
            case .unanswered: failures["Unanswered", default: 0] += 1
            }
            sent += 1
        }
        metrics.recordOutcomes(provider: provider, sent: sent, delivered: delivered, failures: failures)
    }

    /// A batch job finished: what came of it, in the app's activity log (counts and reasons only).
    func batchFinished(_ job: PushJob, applicationID: UUID, result: BatchResult, time: Int64) {
        var counts: [String: Int] = [:]
        let failed = result.failed.values.reduce(0, +)
        for (key, value) in [
            ("delivered", result.delivered), ("invalid_tokens", result.gone.count), ("failed", failed),
            ("retrying", result.retryCount), ("skipped", result.skipped), ("expired", result.expired),
        ] where value > 0 {
            counts[key] = value
        }
        guard !counts.isEmpty else { return }
        activity.record(
            ActivityEvent(
                time: time, kind: .batchSent, pushID: job.pushID, counts: counts,
                message: "batch of \(job.deviceIDs.count) devices (attempt \(job.attempt + 1))"),
            applicationID: applicationID)
        if failed > 0 {
            activity.record(
                ActivityEvent(
                    time: time, kind: .failure, pushID: job.pushID,
                    counts: result.failed.reduce(into: [:]) { $0[DeliveryMetrics.reasonLabel($1.key), default: 0] += $1.value },
                    message: "\(failed) notifications failed for good"),
                applicationID: applicationID)
        }
    }

    /// A provider's reason or error text as it may be logged: a reason code as it is; a longer
    /// text (which can quote a Web Push endpoint or a WNS channel URI, that is a token) redacted
    /// unless `--log-sensitive`.
    func loggableReason(_ reason: String) -> String {
        DeliveryMetrics.reasonLabel(reason) == reason ? reason : logSensitivity.loggable(reason)
    }

    /// A platform cannot send: its credentials are missing, or the provider refused them.
    func credentialsProblem(platformID: UUID, type: PlatformType, applicationID: UUID, devices: Int, message: String, time: Int64) {
        activity.record(
            ActivityEvent(
                time: time, kind: .credentialsProblem, platformID: platformID, provider: DeliveryMetrics.provider(for: type),
                counts: devices > 0 ? ["devices": devices] : [:], message: message),
            applicationID: applicationID)
    }

    /// A provider gave no answer for `devices` devices of a batch (TLS, DNS, a refused
    /// connection, the proxy): the cause goes to the app's activity log, not only to the
    /// process's log, while the devices wait for their retries.
    func providerUnreachable(
        pushID: UUID, platformID: UUID, type: PlatformType, applicationID: UUID, devices: Int, cause: String, time: Int64
    ) {
        activity.record(
            ActivityEvent(
                time: time, kind: .providerUnreachable, pushID: pushID, platformID: platformID,
                provider: DeliveryMetrics.provider(for: type), counts: ["devices": devices],
                message: "the provider could not be reached: \(Self.shownCause(cause))"),
            applicationID: applicationID)
    }

    /// Why a provider could not be reached, as the app's operator is shown it (activity log, the
    /// push's status): the error's text, with each URL cut to its origin (a Web Push endpoint's
    /// or a WNS channel's path is the device's token), at most 300 characters. The causes are
    /// the network's and the TLS library's (a refused connection, an unknown CA, a host name),
    /// which the operator needs to see to fix; the log keeps redacting them unless
    /// `--log-sensitive`.
    static func shownCause(_ cause: String) -> String {
        let ends: (Character) -> Bool = { $0.isWhitespace || $0 == "\"" || $0 == "'" }
        var shown = ""
        var rest = Substring(cause)
        while let scheme = rest.range(of: "://") {
            shown += rest[..<scheme.upperBound]
            let after = rest[scheme.upperBound...]
            let hostEnd = after.firstIndex { ends($0) || $0 == "/" || $0 == "?" || $0 == "#" } ?? after.endIndex
            let urlEnd = after[hostEnd...].firstIndex(where: ends) ?? after.endIndex
            shown += after[..<hostEnd]
            if urlEnd > hostEnd { shown += "/…" }
            rest = after[urlEnd...]
        }
        shown += rest
        return shown.count > 300 ? String(shown.prefix(299)) + "…" : shown
    }
}
