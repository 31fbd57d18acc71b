/// A notification that got no answer from its provider (APNs, FCM, Web Push): it was never
/// sent, its connection failed with it in flight, or no access token could be had for it.
///
/// One type for every provider, in swift-nio's style: a struct around a private enum, so that
/// cases can be added without breaking callers; `unknown` carries what Herald cannot name.
package struct ProviderSendError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Base: Sendable, Hashable {
        case notSent
        case notStarted
        case connectionFailed(String)
        case noAccessToken(String)
        case unknown(String)
    }

    private let base: Base

    private init(_ base: Base) {
        self.base = base
    }

    /// Never reached the provider (queued when its connection closed, refused, above a GOAWAY).
    package static let notSent = ProviderSendError(Base.notSent)

    /// Not started: the process is shutting down (a provider sending one request per device
    /// starts no new one then). The delivery engine gives the device back to the queue.
    package static let notStarted = ProviderSendError(Base.notStarted)

    /// The connection failed with the request in flight: it may or may not have arrived.
    package static func connectionFailed(_ reason: String) -> ProviderSendError { ProviderSendError(Base.connectionFailed(reason)) }

    /// No access token could be had for the request (the token endpoint gave no answer).
    package static func noAccessToken(_ reason: String) -> ProviderSendError { ProviderSendError(Base.noAccessToken(reason)) }

    /// Anything else that kept an answer from coming.
    package static func unknown(_ reason: String) -> ProviderSendError { ProviderSendError(Base.unknown(reason)) }

    /// The error of a request that got no HTTP answer; nil for an answer.
    package init?(_ response: HTTP2Response) {
        switch response {
        case .answered: return nil
        case .notSent: self = .notSent
        case .failed(let reason): self = .connectionFailed(reason)
        }
    }

    package var description: String {
        switch base {
        case .notSent: "not sent"
        case .notStarted: "not started: shutting down"
        case .connectionFailed(let reason): reason
        case .noAccessToken(let reason): "no access token: \(reason)"
        case .unknown(let reason): reason
        }
    }
}
