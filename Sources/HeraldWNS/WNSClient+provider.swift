import HeraldCore
import HeraldHTTP

extension WNSClient: ProviderClient {
    /// Sends `notification` to each channel, `concurrency` requests at a time (WNS takes one
    /// channel per request); once `stopStarting` says so, the channels not yet started are
    /// `unanswered(.notStarted)`.
    package func send(_ notification: WNSNotification, to channelURIs: [String]) async -> [ProviderOutcome<WNSErrorReason>] {
        await BoundedConcurrency.map(channelURIs, limit: concurrency, notStarted: .unanswered(.notStarted), stopStarting: stopStarting) {
            channelURI in
            do {
                return try await self.send(notification, channelURI: channelURI).providerOutcome
            } catch let error as WNSError {
                return .failed(WNSErrorReason(error))
            } catch {
                return .unanswered(.unknown("\(error)"))
            }
        }
    }
}
