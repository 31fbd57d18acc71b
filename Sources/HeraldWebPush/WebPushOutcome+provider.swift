import HeraldHTTP

extension WebPushOutcome: ProviderOutcomeConvertible {
    package var providerOutcome: ProviderOutcome<WebPushErrorReason> {
        switch self {
        case .delivered: .delivered
        case .deviceGone(let reason): .gone(reason, since: nil)
        case .retry(let reason, let after): .retry(reason, after: after)
        case .credentialsRejected(let reason, _): .credentialsRejected(reason)
        case .failed(let reason, _): .failed(reason)
        }
    }
}
