import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore
import NIOHTTP1
import NIOSSL

/// Sends Web Push messages (RFC 8030) to push services, encrypted for each subscription
/// (RFC 8291) and signed with the platform's VAPID key (RFC 8292), over HTTP/2 or HTTP/1.1 as
/// the push service offers (async-http-client, reusing connections per origin).
///
/// The client only reports outcomes; what to do about them (deactivate, retry, pause) is the
/// dispatcher's decision.
public final class WebPushClient: Sendable {
    private let httpClient: HTTPClient
    private let endpointOverride: String?
    private let now: @Sendable () -> Int64

    /// - Parameters:
    ///   - endpointOverride: an origin (`https://127.0.0.1:8443`) to send every message to instead
    ///     of the subscription's, keeping the endpoint's path: for a test push service. The
    ///     VAPID audience is then this origin, as the service that receives the request expects.
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test push service or a TLS proxy).
    ///   - proxy: an HTTP CONNECT or SOCKS5 proxy to reach push services through.
    ///   - connectTimeout: how long a connection (TCP and TLS) may take before the send fails.
    ///   - now: the clock (epoch seconds), to read a `Retry-After` date.
    public init(
        endpointOverride: String? = nil, extraTrustedCAPEM: String? = nil, proxy: OutboundProxy? = nil,
        connectTimeout: TimeAmount = .seconds(10), now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) }
    ) throws {
        // Checked before the HTTP client exists: one that is never shut down traps when freed.
        if let endpointOverride {
            guard let origin = WebPushSubscription.origin(of: endpointOverride) else {
                throw WebPushError.invalidEndpoint("the endpoint override '\(endpointOverride)' is not an http(s) origin")
            }
            self.endpointOverride = origin
        } else {
            self.endpointOverride = nil
        }
        self.httpClient = try ProviderHTTPClient.make(extraTrustedCAPEM: extraTrustedCAPEM, proxy: proxy, connectTimeout: connectTimeout)
        self.now = now
    }

    /// Encrypts and sends one message to one subscription.
    ///
    /// Throws when the message cannot be encrypted (see `WebPushError`) or the push service
    /// cannot be reached; every answer it gives is an outcome.
    public func send(_ notification: WebPushNotification, to subscription: WebPushSubscription, vapid: VAPIDSigner) async throws
        -> WebPushOutcome
    {
        let url = try target(for: subscription.endpoint)
        guard let audience = WebPushSubscription.origin(of: url) else {
            throw WebPushError.invalidEndpoint("the endpoint '\(url)' has no origin")
        }
        let body = try WebPushEncryption.encrypt(notification.payload, for: subscription)

        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "ttl", value: String(max(0, notification.ttl)))
        request.headers.add(name: "urgency", value: notification.urgency.rawValue)
        if let topic = notification.topic {
            request.headers.add(name: "topic", value: topic)
        }
        request.headers.add(name: "content-encoding", value: "aes128gcm")
        request.headers.add(name: "content-type", value: "application/octet-stream")
        request.headers.add(name: "authorization", value: try vapid.authorization(audience: audience))
        request.body = .bytes(ByteBuffer(bytes: body))

        let response = try await httpClient.execute(request, timeout: .seconds(30))
        let answer = try await response.body.collect(upTo: 64 * 1024)
        let status = Int(response.status.code)
        let detail = String(decoding: answer.readableBytesView.prefix(512), as: UTF8.self)
        let retryAfter = RetryAfter.seconds(response.headers.first(name: "retry-after"), now: now())
        let outcome = WebPushOutcome(
            status: status, location: response.headers.first(name: "location"), retryAfter: retryAfter, detail: detail)
        if case .credentialsRejected = outcome {
            vapid.rejected(audience: audience)
        }
        return outcome
    }

    /// Closes the connections; call once, after the last send.
    public func shutdown() async throws {
        try await httpClient.shutdown()
    }

    /// The URL to POST to: the subscription's endpoint, or its path and query at the override origin.
    func target(for endpoint: String) throws -> String {
        guard WebPushSubscription.origin(of: endpoint) != nil else {
            throw WebPushError.invalidEndpoint("the endpoint '\(endpoint)' is not an http(s) URL")
        }
        guard let endpointOverride else { return endpoint }
        guard let components = URLComponents(string: endpoint) else {
            throw WebPushError.invalidEndpoint("the endpoint '\(endpoint)' is not a URL")
        }
        var path = components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        return endpointOverride + path
    }
}
