import HeraldHTTP

extension FCMOutcome: ProviderOutcomeConvertible {
    public var providerOutcome: ProviderOutcome {
        switch self {
        case .delivered: .delivered
        case .deviceGone: .gone(since: nil)
        case .retry(let rejection, let after): .retry(reason: "\(rejection.reason)", after: after.map { .seconds($0) })
        case .credentialsRejected(let rejection): .credentialsRejected(reason: "\(rejection.reason)")
        case .failed(let rejection): .failed(reason: "\(rejection.reason)")
        }
    }
}
