import HeraldCore
import HeraldHTTP

extension APNsOutcome: ProviderOutcomeConvertible {
    /// Apple's answer sorted by what to do about it: a dead token (410 `Unregistered`, 400
    /// `BadDeviceToken`, …) is gone since Apple's timestamp, a refused provider token or
    /// certificate rejects the credentials, Apple's transient errors are retried.
    package var providerOutcome: ProviderOutcome<APNsErrorReason> {
        switch self {
        case .accepted:
            return .delivered
        case .rejected(_, let reason, let timestamp):
            if reason.meansDeviceGone { return .gone(reason, since: timestamp.map { EpochClock.Instant(sinceEpoch: .milliseconds($0)) }) }
            if reason.meansCredentialsRejected { return .credentialsRejected(reason) }
            if reason.isRetryable { return .retry(reason, after: nil) }
            return .failed(reason)
        }
    }
}
