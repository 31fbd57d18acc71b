import Foundation
import HeraldCore
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// A few long-lived HTTP/2 connections to one server, each carrying as many concurrent streams as
/// the server allows, for the providers' sends (APNs, FCM, Web Push).
///
/// Requests handed over together go to one connection in one event-loop hop. One connection is
/// opened at first; another only while every open one carries `loadPerConnection` requests or
/// more, up to `maximumConnections`; concurrent sends share a connection that is still being
/// opened. A request that never reached the server (a GOAWAY, a connection that closed before it
/// left) is sent again on another one; one that was on the wire when its connection went down
/// is sent again on a new connection, at most `resendsAfterLoss` times. How many streams each
/// connection keeps in flight shrinks while connections go down with requests on the wire
/// (`HTTP2StreamWindow`), so that a connection reset every few hundred requests still answers
/// most of what it carried.
///
/// On a graceful shutdown (swift-service-lifecycle's, in the sending task) no new request
/// starts: those not started come back `.notSent`; the ones on the wire get `shutdownGrace` to be
/// answered before their connections close.
package final class HTTP2ConnectionPool: Sendable {
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
    private let window: HTTP2StreamWindow
    private let shutdownGrace: Duration
    private let state = Mutex(State())

    /// Times a request lost on the wire (its connection went down before its answer) is sent
    /// again on a new connection before it fails as unanswered.
    package static let resendsAfterLoss = 2
    /// Rounds in a row in which no request got an answer before the rest fail as unanswered.
    static let roundsWithoutProgress = 4

    private struct State {
        var connections: [HTTP2Connection] = []
        /// Connections being opened.
        var opening: [UUID: Task<HTTP2Connection, any Error>] = [:]
        var shutDown = false
        /// A graceful shutdown began: the connections take no new requests.
        var draining = false
        /// Why the last connection could not be opened, until one is.
        var unreachable: ProviderConnectionError?
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
    ///   - shutdownGrace: on a graceful shutdown, how long the requests on the wire may wait for
    ///     their answers before their connections close.
    package init(
        host: String, port: Int, sslContext: NIOSSLContext, proxy: OutboundProxy? = nil, connectTimeout: TimeAmount = .seconds(10),
        requestTimeout: TimeAmount = .seconds(30), maximumConnections: Int = 4, loadPerConnection: Int = 250,
        validatesHeaderBlocks: Bool = true, answerFields: HTTP2AnswerFields = .all, shutdownGrace: Duration = .seconds(10),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
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
        self.window = HTTP2StreamWindow()
        self.shutdownGrace = shutdownGrace
    }

    /// TLS for a provider: the system's roots plus `extraTrustedCAPEM`, ALPN h2, and a client
    /// certificate when given (APNs' certificate auth).
    package static func makeSSLContext(
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
    package var refusedHTTP2: Bool { state.withLock { $0.refusedHTTP2 } }

    /// Why the last attempt to open a connection failed, by cause (TLS trust, DNS, refused,
    /// proxy, …); nil once a connection opens (or before any was tried).
    package var unreachable: ProviderConnectionError? { state.withLock { $0.unreachable } }

    /// Connections open and usable right now (for metrics).
    package var openConnections: Int {
        state.withLock { $0.connections.filter(\.isUsable).count }
    }

    // MARK: Sending

    /// Sends the requests; the responses come in the requests' order. A response is `.notSent`
    /// only when a graceful shutdown kept it from starting; requests that could not be sent
    /// after a few tries, or for want of a connection, are `.failed`.
    ///
    /// Each round sends what is still unanswered on a usable connection and keeps every answer
    /// it got, so progress never depends on one connection carrying the whole batch. Requests
    /// that never left are sent again for as long as rounds bring answers; those lost on the
    /// wire at most `resendsAfterLoss` times each.
    package func send(_ requests: [HTTP2Request]) async -> [HTTP2Response] {
        var results = [HTTP2Response?](repeating: nil, count: requests.count)
        var pending = Array(requests.indices)
        // Times each request was lost on the wire; few are.
        var losses: [Int: Int] = [:]
        var idleRounds = 0
        var lastLoss: String?
        while !pending.isEmpty, idleRounds < Self.roundsWithoutProgress {
            if Task.isShuttingDownGracefully {
                for index in pending { results[index] = .notSent }
                return results.map { $0 ?? .notSent }
            }
            let chunk = pending
            pending = []
            let connection: HTTP2Connection
            do {
                connection = try await acquire(load: chunk.count)
            } catch {
                let cause = error as? ProviderConnectionError ?? ProviderConnectionError(error, host: host, port: port, proxy: proxy)
                for index in chunk { results[index] = Task.isShuttingDownGracefully ? .notSent : .failed("\(cause)") }
                break
            }
            let (responses, lost) = await withGracefulShutdownHandler {
                await connection.send(chunk.map { requests[$0] })
            } onGracefulShutdown: {
                self.drain()
            }
            connection.add(load: -chunk.count)
            var progressed = false
            for (position, (index, response)) in zip(chunk, responses).enumerated() {
                switch response {
                case .notSent:
                    pending.append(index)
                case .failed(let reason) where lost.contains(position) && !Task.isShuttingDownGracefully:
                    let times = losses[index, default: 0] + 1
                    losses[index] = times
                    lastLoss = reason
                    if times <= Self.resendsAfterLoss {
                        pending.append(index)
                    } else {
                        results[index] = response
                        progressed = true
                    }
                case .answered, .failed:
                    results[index] = response
                    progressed = true
                }
            }
            idleRounds = progressed ? 0 : idleRounds + 1
        }
        let kept = "the connections to \(host):\(port) kept closing" + (lastLoss.map { " (\($0))" } ?? "")
        for index in pending { results[index] = .failed(kept) }
        return results.map { $0 ?? .failed("not sent") }
    }

    // MARK: Connections

    private enum Choice {
        case use(HTTP2Connection)
        case await(Task<HTTP2Connection, any Error>)
        case shutDown
    }

    /// The least loaded usable connection while it carries fewer than `loadPerConnection`
    /// requests (or no other can be opened); a new one while all are that busy and there is room;
    /// or the one being opened. A push to a few devices thus opens one connection, not
    /// `maximumConnections`.
    private func acquire(load: Int) async throws -> HTTP2Connection {
        while true {
            let choice = state.withLock { state -> Choice in
                guard !state.shutDown, !state.draining else { return .shutDown }
                state.connections.removeAll { !$0.isUsable }
                let best = state.connections.min { $0.load < $1.load }
                let room = state.connections.count + state.opening.count < maximumConnections
                if let best, best.load < loadPerConnection || !room {
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
                            requestTimeout: requestTimeout, validatesHeaderBlocks: validatesHeaderBlocks, answerFields: answerFields,
                            window: window)
                        // In the pool before anyone awaiting this task resumes.
                        let kept = self.state.withLock { state -> Bool in
                            state.opening[id] = nil
                            state.unreachable = nil
                            guard !state.shutDown, !state.draining else { return false }
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
                        let cause = ProviderConnectionError(error, host: self.host, port: self.port, proxy: self.proxy)
                        let shutDown = (error as? HTTP2ConnectionError)?.reason == .shutDown
                        self.state.withLock { state in
                            state.opening.removeValue(forKey: id)
                            if refused { state.refusedHTTP2 = true }
                            if !shutDown { state.unreachable = cause }
                        }
                        // HTTP/1.1 fallback needs to see the server's refusal of h2 as it is.
                        if refused || shutDown { throw error }
                        throw cause
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

    /// A graceful shutdown: every connection stops taking requests, and closes once its
    /// requests on the wire are answered or `shutdownGrace` has passed.
    private func drain() {
        let connections = state.withLock { state -> [HTTP2Connection] in
            guard !state.draining else { return [] }
            state.draining = true
            return state.connections
        }
        for connection in connections { connection.drain(grace: shutdownGrace) }
    }

    /// Closes every connection.
    package func shutdown() async {
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
