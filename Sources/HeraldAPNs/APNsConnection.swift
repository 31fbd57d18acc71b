import HeraldCore
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// One HTTP/2 connection to APNs and the requests the pool assigned to it.
final class APNsConnection: Sendable {
    private let channel: any Channel
    private let handler: NIOLoopBound<APNsConnectionHandler>
    private let assigned = Atomic<Int>(0)
    private let usable = Atomic<Bool>(true)

    private init(channel: any Channel, handler: NIOLoopBound<APNsConnectionHandler>) {
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

    /// Opens a TLS connection negotiating h2, directly or through `proxy`, and the HTTP/2
    /// session over it.
    static func connect(
        host: String, port: Int, sslContext: NIOSSLContext, proxy: OutboundProxy?, group: any EventLoopGroup, timeout: TimeAmount
    ) async throws -> APNsConnection {
        let deadline = NIODeadline.now() + timeout
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
        let channel: any Channel
        if let proxy {
            // TCP to the proxy, the tunnel, then TLS to APNs inside it.
            channel = try await bootstrap.connect(host: proxy.host, port: proxy.port).get()
            do {
                try await channel.eventLoop.flatSubmit {
                    ProxyTunnel.open(on: channel, through: proxy, to: host, port: port, deadline: deadline).flatMapThrowing {
                        try addHTTP2Handlers(to: channel, host: host, sslContext: sslContext)
                    }
                }.get()
            } catch {
                try? await channel.close()
                throw error
            }
        } else {
            channel = try await bootstrap
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try addHTTP2Handlers(to: channel, host: host, sslContext: sslContext) }
                }
                .connect(host: host, port: port).get()
        }
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: APNsConnectionHandler.self), eventLoop: channel.eventLoop)
        }.get()
        let connection = APNsConnection(channel: channel, handler: handler)
        try await channel.eventLoop.submit {
            handler.value.onUnusable = { [weak connection] in connection?.usable.store(false, ordering: .relaxed) }
        }.get()
        return connection
    }

    /// TLS (SNI for a host name), HTTP/2 and the APNs request handler. Call on the channel's loop.
    private static func addHTTP2Handlers(to channel: any Channel, host: String, sslContext: NIOSSLContext) throws {
        // An IP address cannot go in SNI; the certificate is then checked against the address.
        let serverHostname = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
        try sync.addHandler(
            NIOHTTP2Handler(
                mode: .client,
                initialSettings: [
                    HTTP2Setting(parameter: .enablePush, value: 0),
                    HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
                    HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                    HTTP2Setting(parameter: .maxHeaderListSize, value: 1 << 16),
                ]))
        try sync.addHandler(APNsConnectionHandler())
    }

    /// Sends one request per path; the responses come in the paths' order.
    func send(headers: HPACKHeaders, paths: [String], body: ByteBuffer) async -> [APNsResponse] {
        let promise = channel.eventLoop.makePromise(of: [APNsResponse?].self)
        let handler = self.handler
        channel.eventLoop.execute {
            handler.value.enqueue(.init(headers: headers, paths: paths, body: body, promise: promise))
        }
        let results = (try? await promise.futureResult.get()) ?? []
        return paths.indices.map { index in index < results.count ? results[index] ?? .notSent : .notSent }
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
