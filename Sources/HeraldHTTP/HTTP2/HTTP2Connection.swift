import HeraldCore
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// One HTTP/2 connection and the requests the pool assigned to it.
final class HTTP2Connection: Sendable {
    private let channel: any Channel
    private let handler: NIOLoopBound<HTTP2ConnectionHandler>
    private let assigned = Atomic<Int>(0)
    private let usable = Atomic<Bool>(true)

    private init(channel: any Channel, handler: NIOLoopBound<HTTP2ConnectionHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// Requests assigned and not yet answered.
    var load: Int { assigned.load(ordering: .relaxed) }

    /// False once the connection closed or the server sent GOAWAY.
    var isUsable: Bool { usable.load(ordering: .relaxed) && channel.isActive }

    func add(load: Int) {
        assigned.add(load, ordering: .relaxed)
    }

    /// Opens a TLS connection, directly or through `proxy`, and the HTTP/2 session over it;
    /// returns once TLS is up and the server agreed to h2 (ALPN).
    static func connect(
        host: String, port: Int, sslContext: NIOSSLContext, proxy: OutboundProxy?, group: any EventLoopGroup, timeout: TimeAmount,
        requestTimeout: TimeAmount, validatesHeaderBlocks: Bool, answerFields: HTTP2AnswerFields, window: HTTP2StreamWindow? = nil
    ) async throws -> HTTP2Connection {
        let deadline = NIODeadline.now() + timeout
        // The loop is chosen once, here. The promise below and the bootstrap (its channel, its
        // resolver) each asked the group for its next loop, so where connections landed depended
        // on how often the group was asked: in a 500,000-device fan-out on two cores all four
        // provider connections ran on one loop (7.6 s of CPU against 0 on the other).
        let loop = group.next()
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        let channel: any Channel
        let negotiated: EventLoopFuture<Void>
        if let proxy {
            // TCP to the proxy, the tunnel, then TLS to the server inside it.
            channel = try await bootstrap.connect(host: proxy.host, port: proxy.port).get()
            negotiated = channel.eventLoop.flatSubmit {
                ProxyTunnel.open(on: channel, through: proxy, to: host, port: port, deadline: deadline).flatMapThrowing {
                    try addHTTP2Handlers(
                        to: channel, host: host, sslContext: sslContext, deadline: deadline, requestTimeout: requestTimeout,
                        validatesHeaderBlocks: validatesHeaderBlocks, answerFields: answerFields, window: window)
                }.flatMap { $0 }
            }
        } else {
            let promise = loop.makePromise(of: EventLoopFuture<Void>.self)
            do {
                channel =
                    try await bootstrap
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            promise.succeed(
                                try addHTTP2Handlers(
                                    to: channel, host: host, sslContext: sslContext, deadline: deadline, requestTimeout: requestTimeout,
                                    validatesHeaderBlocks: validatesHeaderBlocks, answerFields: answerFields, window: window))
                        }
                    }
                    .connect(host: host, port: port).get()
            } catch {
                promise.fail(error)
                throw error
            }
            negotiated = promise.futureResult.flatMap { $0 }
        }
        do {
            try await negotiated.get()
        } catch {
            try? await channel.close()
            throw error
        }
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: HTTP2ConnectionHandler.self), eventLoop: channel.eventLoop)
        }.get()
        let connection = HTTP2Connection(channel: channel, handler: handler)
        try await channel.eventLoop.submit {
            handler.value.onUnusable = { [weak connection] in connection?.usable.store(false, ordering: .relaxed) }
        }.get()
        return connection
    }

    /// TLS (SNI for a host name), a check that ALPN chose h2, and the HTTP/2 handler.
    /// Call on the channel's loop; the future completes when the TLS handshake has.
    private static func addHTTP2Handlers(
        to channel: any Channel, host: String, sslContext: NIOSSLContext, deadline: NIODeadline, requestTimeout: TimeAmount,
        validatesHeaderBlocks: Bool, answerFields: HTTP2AnswerFields, window: HTTP2StreamWindow?
    ) throws -> EventLoopFuture<Void> {
        // An IP address cannot go in SNI; the certificate is then checked against the address.
        let serverHostname = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
        let negotiated = channel.eventLoop.makePromise(of: Void.self)
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
        // The connection is ready once TLS is up and the server chose h2.
        try sync.addHandler(
            ReadinessHandler(promise: negotiated, deadline: deadline) { event in
                guard case TLSUserEvent.handshakeCompleted(let chosen) = event else { return nil }
                return chosen == "h2" ? .success(()) : .failure(HTTP2ConnectionError(.http2NotOffered(chosen)))
            })
        // HTTP/2 itself, framed on the TLS bytes (see `HTTP2Wire` for why not swift-nio-http2's handler).
        try sync.addHandler(
            HTTP2ConnectionHandler(
                requestTimeout: requestTimeout, validatesHeaderBlocks: validatesHeaderBlocks, answerFields: answerFields, window: window))
        return negotiated.futureResult
    }

    /// Sends the requests; the responses come in the requests' order, with the indices of the
    /// requests that were on the wire when the connection went down.
    func send(_ requests: [HTTP2Request]) async -> (responses: [HTTP2Response], lost: Set<Int>) {
        let promise = channel.eventLoop.makePromise(of: HTTP2ConnectionHandler.Completed.self)
        let handler = self.handler
        channel.eventLoop.execute {
            handler.value.enqueue(.init(requests: requests, promise: promise))
        }
        let completed = try? await promise.futureResult.get()
        let results = completed?.results ?? []
        let responses = requests.indices.map { index in index < results.count ? results[index] ?? .notSent : .notSent }
        return (responses, completed?.lost ?? [])
    }

    /// Starts no new stream (the queued requests come back as not sent); the ones on the wire
    /// have `grace` to be answered, then the connection closes and they fail as unanswered.
    func drain(grace: Duration) {
        usable.store(false, ordering: .relaxed)
        let handler = self.handler
        let channel = self.channel
        channel.eventLoop.execute {
            handler.value.stopTakingRequests()
            channel.eventLoop.scheduleTask(in: TimeAmount(grace)) { channel.close(promise: nil) }
        }
    }

    func close() {
        usable.store(false, ordering: .relaxed)
        channel.close(promise: nil)
    }

    func closeAndWait() async {
        usable.store(false, ordering: .relaxed)
        try? await channel.close()
    }
}
