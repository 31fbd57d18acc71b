import Foundation
import HeraldCore
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A few long-lived HTTP/2 connections to one server, each carrying as many concurrent streams as
/// the server allows, for the providers' sends (APNs, FCM, Web Push).
///
/// Requests handed over together go to one connection in one event-loop hop. Another connection
/// is opened while the open ones carry `loadPerConnection` requests, up to `maximumConnections`;
/// concurrent sends share a connection that is still being opened. A request that never reached
/// the server (a GOAWAY, a connection that closed before it left) is sent again on another one.
public final class HTTP2ConnectionPool: Sendable {
    private let host: String
    private let port: Int
    private let sslContext: NIOSSLContext
    private let proxy: OutboundProxy?
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let requestTimeout: TimeAmount
    private let maximumConnections: Int
    private let loadPerConnection: Int
    private let validatesHeaderBlocks: Bool
    private let answerFields: HTTP2AnswerFields
    private let state = Mutex(State())

    private struct State {
        var connections: [HTTP2Connection] = []
        /// Connections being opened.
        var opening: [UUID: Task<HTTP2Connection, any Error>] = [:]
        var shutDown = false
        var refusedHTTP2 = false
    }

    /// - Parameters:
    ///   - sslContext: TLS for the server (see `makeSSLContext`); ALPN must offer h2.
    ///   - proxy: an HTTP CONNECT or SOCKS5 proxy to reach the server through; TLS runs inside.
    ///   - connectTimeout: how long a connection (TCP, proxy, TLS) may take before its sends fail.
    ///   - requestTimeout: how long a request may wait for its answer before it fails unanswered
    ///     (and its connection takes no more requests).
    ///   - maximumConnections: connections opened at most while the open ones are full.
    ///   - loadPerConnection: requests given to one connection before another is opened, so that
    ///     the work spreads over a few connections (and event loops).
    ///   - validatesHeaderBlocks: whether each connection checks every header block sent and
    ///     received against RFC 9113 §8.2 (field names, values, pseudo-headers). A client whose
    ///     headers are all composed from values validated when they were accepted may turn it off.
    ///   - answerFields: the fields of each answer handed back in `HTTP2Response.answered`'s
    ///     headers (all of them while `validatesHeaderBlocks` is on).
    public init(
        host: String, port: Int, sslContext: NIOSSLContext, proxy: OutboundProxy? = nil, connectTimeout: TimeAmount = .seconds(10),
        requestTimeout: TimeAmount = .seconds(30), maximumConnections: Int = 4, loadPerConnection: Int = 250,
        validatesHeaderBlocks: Bool = true, answerFields: HTTP2AnswerFields = .all, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.host = host
        self.port = port
        self.sslContext = sslContext
        self.proxy = proxy
        self.group = eventLoopGroup
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maximumConnections = max(1, maximumConnections)
        self.loadPerConnection = max(1, loadPerConnection)
        self.validatesHeaderBlocks = validatesHeaderBlocks
        self.answerFields = answerFields
    }

    /// TLS for a provider: the system's roots plus `extraTrustedCAPEM`, ALPN h2, and a client
    /// certificate when given (APNs' certificate auth).
    public static func makeSSLContext(
        extraTrustedCAPEM: String?, certificateChain: [NIOSSLCertificate] = [], privateKey: NIOSSLPrivateKey? = nil
    ) throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = ["h2"]
        // Closing a connection sends close_notify; the peer's own is not worth waiting the
        // default 5 s for (RFC 8446 §6.1 lets the side that closes first go at once): a
        // provider that does not answer it would hold up every shutdown.
        tls.shutdownTimeout = .milliseconds(500)
        if let extraTrustedCAPEM {
            let extra = try NIOSSLCertificate.fromPEMBytes(Array(extraTrustedCAPEM.utf8))
            tls.additionalTrustRoots = [.certificates(extra)]
        }
        if let privateKey {
            tls.certificateChain = certificateChain.map { .certificate($0) }
            tls.privateKey = .privateKey(privateKey)
        }
        return try NIOSSLContext(configuration: tls)
    }

    /// True once a connection found that the server does not speak h2 (ALPN chose otherwise):
    /// its sends then fail, and the caller may go over HTTP/1.1 instead.
    public var refusedHTTP2: Bool { state.withLock { $0.refusedHTTP2 } }

    /// Connections open and usable right now (for metrics).
    public var openConnections: Int {
        state.withLock { $0.connections.filter(\.isUsable).count }
    }

    // MARK: Sending

    /// Sends the requests; the responses come in the requests' order. A response is never
    /// `.notSent`: requests that could not be sent after a few tries, or for want of a
    /// connection, are `.failed`.
    public func send(_ requests: [HTTP2Request]) async -> [HTTP2Response] {
        var results = [HTTP2Response?](repeating: nil, count: requests.count)
        var unsent = Array(requests.indices)
        for _ in 0..<4 where !unsent.isEmpty {
            let chunk = unsent
            unsent = []
            let connection: HTTP2Connection
            do {
                connection = try await acquire(load: chunk.count)
            } catch {
                for index in chunk { results[index] = .failed("cannot connect to \(host):\(port): \(error)") }
                break
            }
            let responses = await connection.send(chunk.map { requests[$0] })
            connection.add(load: -chunk.count)
            for (index, response) in zip(chunk, responses) {
                if case .notSent = response {
                    unsent.append(index)
                } else {
                    results[index] = response
                }
            }
        }
        for index in unsent { results[index] = .failed("the connections to \(host):\(port) kept closing") }
        return results.map { $0 ?? .failed("not sent") }
    }

    // MARK: Connections

    private enum Choice {
        case use(HTTP2Connection)
        case await(Task<HTTP2Connection, any Error>)
        case shutDown
    }

    /// The least loaded usable connection; a new one while all are busy and there is room; or
    /// the one being opened.
    private func acquire(load: Int) async throws -> HTTP2Connection {
        while true {
            let choice = state.withLock { state -> Choice in
                guard !state.shutDown else { return .shutDown }
                state.connections.removeAll { !$0.isUsable }
                let best = state.connections.min { $0.load < $1.load }
                let room = state.connections.count + state.opening.count < maximumConnections
                if let best, best.load + load <= loadPerConnection || !room {
                    best.add(load: load)
                    return .use(best)
                }
                if best == nil, let opening = state.opening.values.first {
                    return .await(opening)
                }
                let id = UUID()
                let task = Task { [self] in
                    do {
                        let connection = try await HTTP2Connection.connect(
                            host: host, port: port, sslContext: sslContext, proxy: proxy, group: group, timeout: connectTimeout,
                            requestTimeout: requestTimeout, validatesHeaderBlocks: validatesHeaderBlocks, answerFields: answerFields)
                        // In the pool before anyone awaiting this task resumes.
                        let kept = self.state.withLock { state -> Bool in
                            state.opening[id] = nil
                            guard !state.shutDown else { return false }
                            state.connections.append(connection)
                            return true
                        }
                        if !kept {
                            connection.close()
                            throw HTTP2ConnectionError(.shutDown)
                        }
                        return connection
                    } catch {
                        let refused = (error as? HTTP2ConnectionError)?.isHTTP2NotOffered ?? false
                        self.state.withLock { state in
                            state.opening.removeValue(forKey: id)
                            if refused { state.refusedHTTP2 = true }
                        }
                        throw error
                    }
                }
                state.opening[id] = task
                return .await(task)
            }
            switch choice {
            case .use(let connection):
                return connection
            case .shutDown:
                throw HTTP2ConnectionError(.shutDown)
            case .await(let task):
                // A connection being opened (by this send or another): use it once it is up.
                _ = try await task.value
            }
        }
    }

    /// Closes every connection.
    public func shutdown() async {
        let connections = state.withLock { state -> [HTTP2Connection] in
            state.shutDown = true
            defer { state.connections = [] }
            return state.connections
        }
        await withTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { await connection.closeAndWait() } }
        }
    }
}
