import HeraldCore
import HeraldHTTP

extension FCMClient: ProviderClient {
    /// Sends `message` to each registration token in one hop (see `send(_:tokens:)`).
    package func send(_ message: FCMMessage, to tokens: [String]) async -> [ProviderOutcome<FCMErrorReason>] {
        await send(message, tokens: tokens).map(\.providerOutcome)
    }
}
