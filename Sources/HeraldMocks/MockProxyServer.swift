import NIOCore
import NIOPosix
import Synchronization

/// A tiny outbound proxy on 127.0.0.1 for tests: HTTP `CONNECT` (RFC 9110 §9.3.6) and SOCKS5
/// without authentication (RFC 1928, `CONNECT` only), told apart by the first byte. It opens a
/// TCP tunnel to the requested host and relays bytes both ways, recording each tunnel, so a
/// test can prove that a client's traffic went through it.
public final class MockProxyServer: Sendable {
    /// How a tunnel was asked for.
    public enum Kind: String, Sendable, Equatable {
        case httpConnect
        case socks5
    }

    /// A tunnel the proxy opened.
    public struct Tunnel: Sendable, Equatable {
        public var kind: Kind
        /// `host:port` as the client asked for it.
        public var target: String

        public init(kind: Kind, target: String) {
            self.kind = kind
            self.target = target
        }
    }

    private struct State {
        var tunnels: [Tunnel] = []
        var channel: (any Channel)?
    }

    private let group: MultiThreadedEventLoopGroup
    private let state = Mutex(State())

    public init(threads: Int = 1) {
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
    }

    /// Starts listening on `host:port` (0 picks a free port) and returns the port.
    public func start(host: String = "127.0.0.1", port: Int = 0) async throws -> Int {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HandshakeHandler(proxy: self))
                }
            }
            .bind(host: host, port: port).get()
        state.withLock { $0.channel = channel }
        guard let port = channel.localAddress?.port else {
            throw MockServerError(message: "the mock proxy has no port")
        }
        return port
    }

    /// Stops listening and closes the tunnels.
    public func shutdown() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    /// The tunnels opened so far.
    public var tunnels: [Tunnel] { state.withLock { $0.tunnels } }

    func opened(_ tunnel: Tunnel) {
        state.withLock { $0.tunnels.append(tunnel) }
    }
}

/// Reads a CONNECT request or a SOCKS5 greeting and request, opens the tunnel, then hands the
/// connection over to a relay.
private final class HandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Stage {
        case start
        /// SOCKS5: the method selection was answered; waiting for the request.
        case socksRequest
        /// Connecting to the target; bytes that arrive meanwhile are kept.
        case connecting
    }

    private let proxy: MockProxyServer
    private var stage = Stage.start
    private var buffer = ByteBuffer()

    init(proxy: MockProxyServer) {
        self.proxy = proxy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        buffer.writeBuffer(&chunk)
        switch stage {
        case .start:
            guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return }
            if first == 5 {
                socksGreeting(context: context)
            } else {
                httpConnect(context: context)
            }
        case .socksRequest:
            socksRequest(context: context)
        case .connecting:
            break
        }
    }

    // MARK: HTTP CONNECT

    private func httpConnect(context: ChannelHandlerContext) {
        let view = buffer.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if buffer.readableBytes > 8192 { refuseHTTP(context: context, "431 Request Header Fields Too Large") }
            return
        }
        let head = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
        buffer.moveReaderIndex(to: end.upperBound)
        let words = head.split(separator: "\r\n").first?.split(separator: " ") ?? []
        guard words.count == 3, words[0] == "CONNECT", let (host, port) = Self.hostAndPort(String(words[1])) else {
            refuseHTTP(context: context, "405 Method Not Allowed")
            return
        }
        connect(context: context, host: host, port: port, kind: .httpConnect) { context, succeeded in
            let answer = succeeded ? "HTTP/1.1 200 Connection Established\r\n\r\n" : "HTTP/1.1 502 Bad Gateway\r\n\r\n"
            context.writeAndFlush(NIOAny(ByteBuffer(string: answer)), promise: nil)
        }
    }

    private func refuseHTTP(context: ChannelHandlerContext, _ status: String) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 \(status)\r\nContent-Length: 0\r\n\r\n")))
            .assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    static func hostAndPort(_ authority: String) -> (String, Int)? {
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) else { return nil }
        var host = String(authority[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    // MARK: SOCKS5

    private func socksGreeting(context: ChannelHandlerContext) {
        // VER NMETHODS METHODS…
        guard buffer.readableBytes >= 2, let count = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt8.self),
            let methods = buffer.getBytes(at: buffer.readerIndex + 2, length: Int(count))
        else { return }
        buffer.moveReaderIndex(forwardBy: 2 + Int(count))
        guard methods.contains(0) else {
            // No acceptable method: only "no authentication" is offered here.
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: [5, 0xFF]))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
            return
        }
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: [5, 0])), promise: nil)
        stage = .socksRequest
        if buffer.readableBytes > 0 { socksRequest(context: context) }
    }

    private func socksRequest(context: ChannelHandlerContext) {
        // VER CMD RSV ATYP DST.ADDR DST.PORT
        let start = buffer.readerIndex
        guard buffer.readableBytes >= 5, let command = buffer.getInteger(at: start + 1, as: UInt8.self),
            let type = buffer.getInteger(at: start + 3, as: UInt8.self)
        else { return }
        var host: String
        var offset: Int
        switch type {
        case 1:
            guard let bytes = buffer.getBytes(at: start + 4, length: 4) else { return }
            host = bytes.map(String.init).joined(separator: ".")
            offset = start + 8
        case 3:
            guard let length = buffer.getInteger(at: start + 4, as: UInt8.self),
                let name = buffer.getString(at: start + 5, length: Int(length))
            else { return }
            host = name
            offset = start + 5 + Int(length)
        case 4:
            guard let bytes = buffer.getBytes(at: start + 4, length: 16) else { return }
            host = stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                .joined(separator: ":")
            offset = start + 20
        default:
            socksReply(context: context, 8)  // address type not supported
            context.close(promise: nil)
            return
        }
        guard let port = buffer.getInteger(at: offset, as: UInt16.self) else { return }
        buffer.moveReaderIndex(to: offset + 2)
        guard command == 1 else {
            socksReply(context: context, 7)  // command not supported
            context.close(promise: nil)
            return
        }
        connect(context: context, host: host, port: Int(port), kind: .socks5) { context, succeeded in
            self.socksReply(context: context, succeeded ? 0 : 5)
        }
    }

    private func socksReply(context: ChannelHandlerContext, _ reply: UInt8) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: [5, reply, 0, 1, 0, 0, 0, 0, 0, 0])), promise: nil)
    }

    // MARK: The tunnel

    private func connect(
        context: ChannelHandlerContext, host: String, port: Int, kind: MockProxyServer.Kind,
        answer: @escaping (ChannelHandlerContext, Bool) -> Void
    ) {
        stage = .connecting
        let inbound = context.channel
        ClientBootstrap(group: context.eventLoop)
            .channelInitializer { outbound in
                outbound.eventLoop.makeCompletedFuture {
                    try outbound.pipeline.syncOperations.addHandler(RelayHandler(partner: inbound))
                }
            }
            .connect(host: host, port: port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let outbound):
                    self.proxy.opened(MockProxyServer.Tunnel(kind: kind, target: "\(host):\(port)"))
                    answer(context, true)
                    if self.buffer.readableBytes > 0 {
                        outbound.writeAndFlush(self.buffer, promise: nil)
                        self.buffer.clear()
                    }
                    do {
                        try context.pipeline.syncOperations.addHandler(RelayHandler(partner: outbound))
                        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                    } catch {
                        context.close(promise: nil)
                        outbound.close(promise: nil)
                    }
                case .failure:
                    answer(context, false)
                    context.close(promise: nil)
                }
            }
    }
}

/// Copies what one side of a tunnel reads to the other, and closes the other when one closes.
private final class RelayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
