import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore
import NIOHPACK
import NIOSSL
import Synchronization

/// Sends Web Push messages (RFC 8030) to push services, encrypted for each subscription
/// (RFC 8291) and signed with the platform's VAPID key (RFC 8292).
///
/// Push services that speak HTTP/2 get HeraldHTTP's frame-level `HTTP2ConnectionPool`, one per
/// origin: a batch's messages for one origin leave in one event-loop hop. One that offers only
/// HTTP/1.1 (its TLS handshake does not choose h2) is remembered and gets async-http-client,
/// which reuses connections per origin.
///
/// The client only reports outcomes; what to do about them (deactivate, retry, pause) is the
/// dispatcher's decision.
package final class WebPushClient: Sendable {
    private let httpClient: HTTPClient
    private let endpointOverride: String?
    private let sslContext: NIOSSLContext
    private let proxy: OutboundProxy?
    private let connectTimeout: TimeAmount
    private let pools = Mutex<[String: HTTP2ConnectionPool]>([:])
    private let clock: EpochClock

    /// - Parameters:
    ///   - endpointOverride: an origin (`https://127.0.0.1:8443`) to send every message to instead
    ///     of the subscription's, keeping the endpoint's path: for a test push service. The
    ///     VAPID audience is then this origin, as the service that receives the request expects.
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test push service or a TLS proxy).
    ///   - proxy: an HTTP CONNECT or SOCKS5 proxy to reach push services through.
    ///   - connectTimeout: how long a connection (TCP and TLS) may take before the send fails.
    ///   - clock: the wall clock, to read a `Retry-After` date.
    package init(
        endpointOverride: String? = nil, extraTrustedCAPEM: String? = nil, proxy: OutboundProxy? = nil,
        connectTimeout: TimeAmount = .seconds(10), clock: EpochClock = .system
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
        self.sslContext = try HTTP2ConnectionPool.makeSSLContext(extraTrustedCAPEM: extraTrustedCAPEM)
        self.httpClient = try ProviderHTTPClient.make(extraTrustedCAPEM: extraTrustedCAPEM, proxy: proxy, connectTimeout: connectTimeout)
        self.proxy = proxy
        self.connectTimeout = connectTimeout
        self.clock = clock
    }

    /// Encrypts and sends one message to one subscription.
    ///
    /// Throws when the message cannot be encrypted (see `WebPushError`) or the push service
    /// cannot be reached; every answer it gives is an outcome.
    package func send(_ notification: WebPushNotification, to subscription: WebPushSubscription, vapid: VAPIDSigner) async throws
        -> WebPushOutcome
    {
        try await send(notification, to: [subscription], vapid: vapid)[0].get()
    }

    /// Encrypts the message for each subscription and sends them all; the results come in the
    /// subscriptions' order: an outcome for each answer, a `WebPushError` for a message that
    /// cannot be encrypted or addressed, another error where no answer came.
    package func send(
        _ notification: WebPushNotification, to subscriptions: [WebPushSubscription], vapid: VAPIDSigner
    ) async -> [Result<WebPushOutcome, any Error>] {
        var results = [Result<WebPushOutcome, any Error>?](repeating: nil, count: subscriptions.count)
        var byOrigin: [String: [Prepared]] = [:]
        for (index, subscription) in subscriptions.enumerated() {
            do {
                let prepared = try prepare(notification, for: subscription, vapid: vapid, index: index)
                byOrigin[prepared.audience, default: []].append(prepared)
            } catch {
                results[index] = .failure(error)
            }
        }
        await withTaskGroup(of: [(Int, Result<WebPushOutcome, any Error>)].self) { group in
            for (audience, messages) in byOrigin {
                group.addTask { await self.deliver(messages, notification, audience: audience, vapid: vapid) }
            }
            for await answers in group {
                for (index, result) in answers { results[index] = result }
            }
        }
        return results.map { $0 ?? .failure(WebPushError.invalidEndpoint("not sent")) }
    }

    /// HTTP/2 connections to push services open and usable right now (for metrics).
    /// Why the last attempt to connect to a push service failed, for one whose last attempt did.
    package var unreachable: ProviderConnectionError? {
        pools.withLock { Array($0.values) }.lazy.compactMap(\.unreachable).first
    }

    package var openConnections: Int {
        pools.withLock { Array($0.values) }.reduce(0) { $0 + $1.openConnections }
    }

    /// Closes the connections; call once, after the last send.
    package func shutdown() async throws {
        let pools = self.pools.withLock { pools in
            defer { pools = [:] }
            return Array(pools.values)
        }
        for pool in pools { await pool.shutdown() }
        try await httpClient.shutdown()
    }

    // MARK: Requests

    /// One encrypted message, addressed and signed.
    private struct Prepared: Sendable {
        let index: Int
        /// The origin: the VAPID audience and the connection pool's key.
        let audience: String
        /// `host[:port]` and path with query, for HTTP/2's pseudo-headers (and the URL over HTTP/1.1).
        let authority: String
        let path: String
        let authorization: String
        let body: ByteBuffer
    }

    private func prepare(
        _ notification: WebPushNotification, for subscription: WebPushSubscription, vapid: VAPIDSigner, index: Int
    ) throws -> Prepared {
        // The endpoint is parsed once: its origin (or the override's) is the audience, the pool's
        // key and, without the scheme, the authority; the path and query go along unchanged.
        guard let components = URLComponents(string: subscription.endpoint), let origin = WebPushSubscription.origin(of: components)
        else {
            throw WebPushError.invalidEndpoint("the endpoint '\(subscription.endpoint)' is not an http(s) URL")
        }
        let audience = endpointOverride ?? origin
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        let authority = audience.components(separatedBy: "://").last ?? audience
        let body = try WebPushEncryption.encrypt(notification.payload, for: subscription)
        return Prepared(
            index: index, audience: audience, authority: authority, path: path,
            authorization: try vapid.authorization(audience: audience), body: ByteBuffer(bytes: body))
    }

    /// The RFC 8030 headers every message carries.
    private static func headers(_ notification: WebPushNotification) -> [(String, String)] {
        var headers = [
            ("ttl", String(max(0, notification.ttl))), ("urgency", notification.urgency.rawValue),
            ("content-encoding", "aes128gcm"), ("content-type", "application/octet-stream"),
        ]
        if let topic = notification.topic { headers.append(("topic", topic)) }
        return headers
    }

    /// Sends one origin's messages over HTTP/2, or over HTTP/1.1 when the push service does not
    /// offer h2 (`HTTP2ConnectionPool.send(_:fallingBackTo:timeout:)` decides).
    private func deliver(
        _ messages: [Prepared], _ notification: WebPushNotification, audience: String, vapid: VAPIDSigner
    ) async -> [(Int, Result<WebPushOutcome, any Error>)] {
        guard let url = URL(string: audience), let host = url.host else {
            return messages.map { ($0.index, .failure(WebPushError.invalidEndpoint("the origin '\(audience)' has no host"))) }
        }
        let pool = self.pool(for: audience, host: host, port: url.port ?? 443)
        let common = Self.headers(notification)
        let requests = messages.map { message in
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":scheme", value: "https")
            headers.add(name: ":authority", value: message.authority)
            headers.add(name: ":path", value: message.path, indexing: .nonIndexable)
            for (name, value) in common { headers.add(name: name, value: value) }
            // Indexed in HPACK's dynamic table, as for APNs: one VAPID token per origin.
            headers.add(name: "authorization", value: message.authorization)
            return HTTP2Request(headers: headers, body: message.body)
        }
        let responses = await pool.send(requests, fallingBackTo: httpClient)
        return zip(messages, responses).map { message, response in
            switch response {
            case .answered(let status, let headers, let body):
                (
                    message.index,
                    .success(
                        outcome(
                            status: status, location: headers.first(name: "location"), retryAfter: headers.first(name: "retry-after"),
                            body: body, audience: audience, vapid: vapid))
                )
            case .notSent:
                (message.index, .failure(ProviderSendError.notSent))
            case .failed(let reason):
                (message.index, .failure(ProviderSendError.connectionFailed(reason)))
            }
        }
    }

    private func outcome(
        status: Int, location: String?, retryAfter: String?, body: ByteBuffer?, audience: String, vapid: VAPIDSigner
    ) -> WebPushOutcome {
        let detail = body.map { String(decoding: $0.readableBytesView.prefix(512), as: UTF8.self) } ?? ""
        let outcome = WebPushOutcome(
            status: status, location: location, retryAfter: RetryAfter.delay(retryAfter, at: clock.now), detail: detail)
        if case .credentialsRejected = outcome {
            vapid.rejected(audience: audience)
        }
        return outcome
    }

    /// The HTTP/2 pool for a push service's origin, made on first use.
    private func pool(for audience: String, host: String, port: Int) -> HTTP2ConnectionPool {
        pools.withLock { pools in
            if let pool = pools[audience] { return pool }
            let pool = HTTP2ConnectionPool(
                host: host, port: port, sslContext: sslContext, proxy: proxy, connectTimeout: connectTimeout, maximumConnections: 2)
            pools[audience] = pool
            return pool
        }
    }
}
