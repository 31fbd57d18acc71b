import Foundation
import HeraldCore
import HeraldHTTP
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL

/// What APNs said about one notification.
package enum APNsOutcome: Sendable, Equatable {
    /// 200: APNs accepted it for delivery.
    case accepted(apnsID: String)
    /// APNs refused it; `timestamp` (epoch ms) comes with 410, when the token stopped being valid.
    case rejected(status: Int, reason: APNsErrorReason, timestamp: Int64?)
}

/// Sends notifications to APNs over HTTP/2 and TLS on a few long-lived connections, each
/// carrying as many concurrent streams as APNs allows (HeraldHTTP's `HTTP2ConnectionPool`, built
/// on swift-nio-http2 frames).
///
/// A batch of notifications with the same payload and headers goes out in one hop to a
/// connection's event loop. The client only reports outcomes; what to do about them (deactivate,
/// retry, pause) is the dispatcher's decision.
package final class APNsClient: Sendable {
    /// Apple's endpoints.
    package static func endpoint(for environment: APNsEnvironment) -> String {
        switch environment {
        case .production: "https://api.push.apple.com"
        case .sandbox: "https://api.sandbox.push.apple.com"
        }
    }

    private let authority: String
    private let pool: HTTP2ConnectionPool

    /// - Parameters:
    ///   - endpoint: Apple's for the environment, or a test server (`https://host[:port]`).
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test endpoint or a TLS proxy).
    ///   - clientCertificate: the .p12 for certificate-based auth.
    ///   - proxy: an HTTP CONNECT or SOCKS5 proxy to reach APNs through; TLS runs inside the tunnel.
    ///   - connectTimeout: how long a connection (TCP and TLS) may take before the send fails.
    ///   - requestTimeout: how long a notification may wait for APNs' answer before it fails
    ///     unanswered.
    ///   - maximumConnections: connections opened at most while the open ones are full.
    ///   - shutdownGrace: on a graceful shutdown, how long notifications on the wire may wait for
    ///     APNs' answers; none starts after it began.
    package init(
        endpoint: String, extraTrustedCAPEM: String? = nil, clientCertificate: APNsCertificateCredentials? = nil,
        proxy: OutboundProxy? = nil, connectTimeout: TimeAmount = .seconds(10), requestTimeout: TimeAmount = .seconds(30),
        maximumConnections: Int = 4, shutdownGrace: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        guard let url = URL(string: endpoint), url.scheme == "https", let host = url.host, !host.isEmpty else {
            throw ValidationError(
                code: "invalid_endpoint", message: "an APNs endpoint must be an https URL, not '\(endpoint)'", field: "endpoint")
        }
        self.authority = url.port.map { "\(host):\($0)" } ?? host
        let sslContext: NIOSSLContext
        if let clientCertificate {
            let bundle = try NIOSSLPKCS12Bundle(buffer: clientCertificate.pkcs12, passphrase: Array(clientCertificate.password.utf8))
            sslContext = try HTTP2ConnectionPool.makeSSLContext(
                extraTrustedCAPEM: extraTrustedCAPEM, certificateChain: bundle.certificateChain, privateKey: bundle.privateKey)
        } else {
            sslContext = try HTTP2ConnectionPool.makeSSLContext(extraTrustedCAPEM: extraTrustedCAPEM)
        }
        self.pool = HTTP2ConnectionPool(
            host: host, port: url.port ?? 443, sslContext: sslContext, proxy: proxy, connectTimeout: connectTimeout,
            requestTimeout: requestTimeout, maximumConnections: maximumConnections,
            // Every header is composed here from values checked when they were accepted: hex device
            // tokens, the platform's topic, a collapse id without control characters, numbers.
            validatesHeaderBlocks: false,
            // An answer is read for its status and `apns-id` only (`outcome`): no string is built
            // for its other fields.
            answerFields: .only(["apns-id"]), shutdownGrace: shutdownGrace, eventLoopGroup: eventLoopGroup)
    }

    // MARK: Sending

    /// Sends one notification to one device.
    ///
    /// - Parameter bearer: the provider token for token-based auth; nil with a client certificate.
    package func send(
        _ notification: APNsNotification, deviceToken: String, topic: String, bearer: String?, apnsID: UUID? = nil
    ) async throws -> APNsOutcome {
        let results = await sendBatch(notification, deviceTokens: [deviceToken], topic: topic, bearer: bearer, apnsID: apnsID)
        return try results[0].get()
    }

    /// Sends the same notification to each device; the results come in the tokens' order.
    /// Each goes with its own `apns-id` (`APNsNotificationIDs`), which APNs echoes.
    package func send(
        _ notification: APNsNotification, deviceTokens: [String], topic: String, bearer: String?
    ) async -> [Result<APNsOutcome, ProviderSendError>] {
        await sendBatch(notification, deviceTokens: deviceTokens, topic: topic, bearer: bearer, apnsID: nil)
    }

    /// The batch send; `apnsID` only for a batch of one (it names one notification).
    private func sendBatch(
        _ notification: APNsNotification, deviceTokens: [String], topic: String, bearer: String?, apnsID: UUID?
    ) async -> [Result<APNsOutcome, ProviderSendError>] {
        var pseudo = HPACKHeaders()
        pseudo.add(name: ":method", value: "POST")
        pseudo.add(name: ":scheme", value: "https")
        pseudo.add(name: ":authority", value: authority)
        var headers = HPACKHeaders()
        headers.add(name: "apns-topic", value: topic)
        headers.add(name: "apns-push-type", value: notification.pushType.rawValue)
        headers.add(name: "apns-priority", value: String(notification.priority))
        // The payload's length up front: a server may otherwise treat the body as a stream of
        // unknown length and wait for more before handling the request. h2o does: against the
        // h2o sink, a debug build whose DATA frames left apart from their HEADERS got 100
        // answers a second without it and 340 with it. One indexed header per batch.
        headers.add(name: "content-length", value: String(notification.payload.count))
        if let expiration = notification.expiration {
            headers.add(name: "apns-expiration", value: String(expiration))
        }
        if let collapseID = notification.collapseID {
            headers.add(name: "apns-collapse-id", value: collapseID)
        }
        if let bearer {
            // Indexed (HPACK's dynamic table), unlike the path: the same token goes with every
            // request on the connection, so it is sent once and then referenced by a byte or two.
            // Nothing that could probe the table shares the connection: devices choose only their
            // tokens, which go in the path, never indexed.
            headers.add(name: "authorization", value: "bearer \(bearer)")
        }
        let body = ByteBuffer(bytes: notification.payload)
        // The path and the id differ per request: not worth a place in the HPACK table. The
        // encoder writes them between the bytes of the shared fields, which it keeps.
        let shared = HTTP2SharedHeaders(pathPrefix: "/3/device/", pseudoHeaders: pseudo, idName: "apns-id", fields: headers)
        let ids = APNsNotificationIDs()
        let requests = deviceTokens.indices.map { index in
            HTTP2Request(shared: shared, pathSuffix: deviceTokens[index], id: apnsID ?? ids.id(index), body: body)
        }
        return await pool.send(requests).map { response in
            switch response {
            case .answered(let status, let headers, let body):
                .success(Self.outcome(status: status, apnsID: headers.first(name: "apns-id"), body: body))
            case .notSent:
                // The pool starts nothing once the process shuts down: the device goes back to the queue.
                .failure(.notStarted)
            case .failed(let reason):
                .failure(.connectionFailed(reason))
            }
        }
    }

    static func outcome(status: Int, apnsID: String?, body: ByteBuffer?) -> APNsOutcome {
        if status == 200 { return .accepted(apnsID: apnsID ?? "") }
        let json = body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.readableBytesView)) as? [String: Any] }
        let reason = APNsErrorReason((json?["reason"] as? String) ?? "HTTP \(status)")
        let timestamp = (json?["timestamp"] as? NSNumber)?.int64Value
        return .rejected(status: status, reason: reason, timestamp: timestamp)
    }

    /// Connections open and usable right now (for metrics).
    package var openConnections: Int { pool.openConnections }

    /// Why the last attempt to connect to APNs failed (TLS trust, DNS, refused, proxy, …); nil
    /// once a connection opened.
    package var unreachable: ProviderConnectionError? { pool.unreachable }

    /// Closes every connection.
    package func shutdown() async {
        await pool.shutdown()
    }
}
