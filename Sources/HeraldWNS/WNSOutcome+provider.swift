import HeraldHTTP

extension WNSOutcome: ProviderOutcomeConvertible {
    public var providerOutcome: ProviderOutcome<WNSErrorReason> {
        switch self {
        case .delivered: .delivered
        case .deviceGone: .gone(since: nil)
        case .retry(let rejection, let after): .retry(rejection.reason, after: after.map { .seconds($0) })
        case .credentialsRejected(let rejection): .credentialsRejected(rejection.reason)
        case .failed(let rejection): .failed(rejection.reason)
        }
    }
}
