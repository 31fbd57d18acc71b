import Foundation
import HeraldCore
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// What APNs said about one notification.
public enum APNsOutcome: Sendable, Equatable {
    /// 200: APNs accepted it for delivery.
    case accepted(apnsID: String)
    /// APNs refused it; `timestamp` (epoch ms) comes with 410, when the token stopped being valid.
    case rejected(status: Int, reason: APNsErrorReason, timestamp: Int64?)
}

/// A notification that got no answer from APNs: the connection failed or closed with it in flight.
public struct APNsSendError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// Sends notifications to APNs over HTTP/2 and TLS (swift-nio-http2, swift-nio-ssl) on a few
/// long-lived connections, each carrying as many concurrent streams as APNs allows.
///
/// A batch of notifications with the same payload and headers goes out in one hop to a
/// connection's event loop; new connections are opened while the open ones are full, up to
/// `maximumConnections`. The client only reports outcomes; what to do about them (deactivate,
/// retry, pause) is the dispatcher's decision.
public final class APNsClient: Sendable {
    /// Apple's endpoints.
    public static func endpoint(for environment: APNsEnvironment) -> String {
        switch environment {
        case .production: "https://api.push.apple.com"
        case .sandbox: "https://api.sandbox.push.apple.com"
        }
    }

    private let host: String
    private let port: Int
    private let authority: String
    private let sslContext: NIOSSLContext
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let maximumConnections: Int
    private let pool = Mutex(Pool())
    /// Requests given to one connection before another is opened (up to `maximumConnections`):
    /// swift-nio-http2's per-stream bookkeeping grows with the streams open on a connection, so
    /// a few connections with a few hundred streams each go faster than one with a thousand.
    static let loadPerConnection = 250

    private struct Pool {
        var connections: [APNsConnection] = []
        /// Connections being opened.
        var opening: [UUID: Task<APNsConnection, any Error>] = [:]
        var shutDown = false
    }

    /// - Parameters:
    ///   - endpoint: Apple's for the environment, or a test server (`https://host[:port]`).
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test endpoint or a TLS proxy).
    ///   - clientCertificate: the .p12 for certificate-based auth.
    ///   - connectTimeout: how long a connection (TCP and TLS) may take before the send fails.
    ///   - maximumConnections: connections opened at most while the open ones are full.
    public init(
        endpoint: String, extraTrustedCAPEM: String? = nil, clientCertificate: APNsCertificateCredentials? = nil,
        connectTimeout: TimeAmount = .seconds(10), maximumConnections: Int = 4,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        guard let url = URL(string: endpoint), url.scheme == "https", let host = url.host, !host.isEmpty else {
            throw ValidationError(code: "invalid_endpoint", message: "an APNs endpoint must be an https URL, not '\(endpoint)'", field: "endpoint")
        }
        self.host = host
        self.port = url.port ?? 443
        self.authority = url.port.map { "\(host):\($0)" } ?? host
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        if let extraTrustedCAPEM {
            let extra = try NIOSSLCertificate.fromPEMBytes(Array(extraTrustedCAPEM.utf8))
            tls.additionalTrustRoots = [.certificates(extra)]
        }
        if let clientCertificate {
            let bundle = try NIOSSLPKCS12Bundle(buffer: clientCertificate.pkcs12, passphrase: Array(clientCertificate.password.utf8))
            tls.certificateChain = bundle.certificateChain.map { .certificate($0) }
            tls.privateKey = .privateKey(bundle.privateKey)
        }
        self.sslContext = try NIOSSLContext(configuration: tls)
        self.group = eventLoopGroup
        self.connectTimeout = connectTimeout
        self.maximumConnections = max(1, maximumConnections)
    }

    // MARK: Sending

    /// Sends one notification to one device.
    ///
    /// - Parameter bearer: the provider token for token-based auth; nil with a client certificate.
    public func send(
        _ notification: APNsNotification, deviceToken: String, topic: String, bearer: String?, apnsID: UUID? = nil
    ) async throws -> APNsOutcome {
        let results = await sendBatch(notification, deviceTokens: [deviceToken], topic: topic, bearer: bearer, apnsID: apnsID)
        return try results[0].get()
    }

    /// Sends the same notification to each device; the results come in the tokens' order.
    /// APNs gives each its own `apns-id`.
    public func send(
        _ notification: APNsNotification, deviceTokens: [String], topic: String, bearer: String?
    ) async -> [Result<APNsOutcome, APNsSendError>] {
        await sendBatch(notification, deviceTokens: deviceTokens, topic: topic, bearer: bearer, apnsID: nil)
    }

    /// The batch send; `apnsID` only for a batch of one (it names one notification).
    private func sendBatch(
        _ notification: APNsNotification, deviceTokens: [String], topic: String, bearer: String?, apnsID: UUID?
    ) async -> [Result<APNsOutcome, APNsSendError>] {
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: authority)
        if let apnsID { headers.add(name: "apns-id", value: apnsID.uuidString.lowercased()) }
        headers.add(name: "apns-topic", value: topic)
        headers.add(name: "apns-push-type", value: notification.pushType.rawValue)
        headers.add(name: "apns-priority", value: String(notification.priority))
        if let expiration = notification.expiration {
            headers.add(name: "apns-expiration", value: String(expiration))
        }
        if let collapseID = notification.collapseID {
            headers.add(name: "apns-collapse-id", value: collapseID)
        }
        if let bearer {
            headers.add(name: "authorization", value: "bearer \(bearer)", indexing: .neverIndexed)
        }
        let body = ByteBuffer(bytes: notification.payload)

        var results = [Result<APNsOutcome, APNsSendError>?](repeating: nil, count: deviceTokens.count)
        var unsent = Array(deviceTokens.indices)
        // Requests that never reached APNs (a GOAWAY, a connection that closed before they
        // left) are sent again on another connection, a few times at most.
        for _ in 0..<4 where !unsent.isEmpty {
            let chunk = unsent
            unsent = []
            let connection: APNsConnection
            do {
                connection = try await acquire(load: chunk.count)
            } catch {
                for index in chunk { results[index] = .failure(APNsSendError(description: "cannot connect to APNs: \(error)")) }
                break
            }
            let responses = await connection.send(
                headers: headers, paths: chunk.map { "/3/device/" + deviceTokens[$0] }, body: body)
            release(connection, load: chunk.count)
            for (index, response) in zip(chunk, responses) {
                switch response {
                case .answered(let status, let apnsID, let body):
                    results[index] = .success(Self.outcome(status: status, apnsID: apnsID, body: body))
                case .notSent:
                    unsent.append(index)
                case .failed(let reason):
                    results[index] = .failure(APNsSendError(description: reason))
                }
            }
        }
        for index in unsent { results[index] = .failure(APNsSendError(description: "APNs connections kept closing")) }
        return results.map { $0! }
    }

    static func outcome(status: Int, apnsID: String?, body: ByteBuffer?) -> APNsOutcome {
        if status == 200 { return .accepted(apnsID: apnsID ?? "") }
        let json = body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.readableBytesView)) as? [String: Any] }
        let reason = APNsErrorReason((json?["reason"] as? String) ?? "HTTP \(status)")
        let timestamp = (json?["timestamp"] as? NSNumber)?.int64Value
        return .rejected(status: status, reason: reason, timestamp: timestamp)
    }

    // MARK: Connections

    private enum Choice {
        case use(APNsConnection)
        case await(Task<APNsConnection, any Error>)
        case shutDown
    }

    /// The least loaded usable connection; a new one while all are busy and there is room; or
    /// the one being opened.
    private func acquire(load: Int) async throws -> APNsConnection {
        while true {
            let choice = pool.withLock { pool -> Choice in
                guard !pool.shutDown else { return .shutDown }
                pool.connections.removeAll { !$0.isUsable }
                let best = pool.connections.min { $0.load < $1.load }
                let room = pool.connections.count + pool.opening.count < maximumConnections
                if let best, best.load + load <= Self.loadPerConnection || !room {
                    best.add(load: load)
                    return .use(best)
                }
                if best == nil, let opening = pool.opening.values.first {
                    return .await(opening)
                }
                let id = UUID()
                let task = Task { [self] in
                    do {
                        let connection = try await APNsConnection.connect(
                            host: host, port: port, sslContext: sslContext, group: group, timeout: connectTimeout)
                        // In the pool before anyone awaiting this task resumes.
                        let kept = self.pool.withLock { pool -> Bool in
                            pool.opening[id] = nil
                            guard !pool.shutDown else { return false }
                            pool.connections.append(connection)
                            return true
                        }
                        if !kept {
                            connection.close()
                            throw APNsSendError(description: "the client is shut down")
                        }
                        return connection
                    } catch {
                        self.pool.withLock { _ = $0.opening.removeValue(forKey: id) }
                        throw error
                    }
                }
                pool.opening[id] = task
                return .await(task)
            }
            switch choice {
            case .use(let connection):
                return connection
            case .shutDown:
                throw APNsSendError(description: "the client is shut down")
            case .await(let task):
                // A connection being opened (by this send or another): use it once it is up.
                _ = try await task.value
            }
        }
    }

    /// Connections open and usable right now (for metrics).
    public var openConnections: Int {
        pool.withLock { $0.connections.filter(\.isUsable).count }
    }

    private func release(_ connection: APNsConnection, load: Int) {
        connection.add(load: -load)
    }

    /// Closes every connection.
    public func shutdown() async {
        let connections = pool.withLock { pool -> [APNsConnection] in
            pool.shutDown = true
            defer { pool.connections = [] }
            return pool.connections
        }
        for connection in connections { await connection.closeAndWait() }
    }
}
