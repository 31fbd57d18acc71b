import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A tiny outbound proxy for tests: HTTP `CONNECT` or SOCKS5 (no authentication, RFC 1928),
/// tunnelling bytes to the target. It opens tunnels to this machine only (127.0.0.1,
/// localhost, ::1) and records each one, so a test can prove a client went through it.
package final class MockProxyServer: Sendable {
    /// Which protocol the proxy speaks.
    package enum Kind: Sendable {
        case httpConnect
        case socks5
    }

    /// A tunnel the proxy opened.
    package struct Tunnel: Sendable, Equatable {
        /// `host:port` as the client asked for it.
        package var target: String
        /// The `Proxy-Authorization` header of a `CONNECT`, if any.
        package var authorization: String?
    }

    /// The protocol it speaks.
    package let kind: Kind
    private let group: MultiThreadedEventLoopGroup
    private let state = Mutex(State())

    private struct State {
        var tunnels: [Tunnel] = []
        var refused: [String] = []
        var channel: (any Channel)?
    }

    /// A proxy speaking `kind`; `start()` it.
    package init(kind: Kind) {
        self.kind = kind
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    /// Starts listening on 127.0.0.1 (0 picks a free port) and returns the port.
    package func start(port: Int = 0) async throws -> Int {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ProxyHandshakeHandler(proxy: self))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        state.withLock { $0.channel = channel }
        guard let port = channel.localAddress?.port else { throw MockServerError(message: "the mock proxy has no port") }
        return port
    }

    /// Stops listening and closes the tunnels.
    package func shutdown() async {
        let channel = state.withLock { $0.channel }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    /// The tunnels opened so far.
    package var tunnels: [Tunnel] { state.withLock { $0.tunnels } }

    /// Targets refused (not on this machine, or unreachable).
    package var refused: [String] { state.withLock { $0.refused } }

    func opened(_ tunnel: Tunnel) { state.withLock { $0.tunnels.append(tunnel) } }

    func refused(_ target: String) { state.withLock { $0.refused.append(target) } }

    static func isLocal(_ host: String) -> Bool {
        ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
    }
}

/// Reads a client's `CONNECT` or SOCKS5 handshake, connects to the target and then glues the
/// two connections together.
private final class ProxyHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Stage { case greeting, request, connecting }

    private let proxy: MockProxyServer
    private var buffer = ByteBuffer()
    private var stage = Stage.greeting

    init(proxy: MockProxyServer) {
        self.proxy = proxy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        buffer.writeBuffer(&chunk)
        switch (proxy.kind, stage) {
        case (_, .connecting):
            break
        case (.httpConnect, _):
            readConnect(context: context)
        case (.socks5, .greeting):
            readGreeting(context: context)
        case (.socks5, .request):
            readSOCKSRequest(context: context)
        }
    }

    // MARK: HTTP CONNECT

    private func readConnect(context: ChannelHandlerContext) {
        let bytes = Array(buffer.readableBytesView)
        guard let end = bytes.indices.dropLast(3).first(where: { bytes[$0...($0 + 3)].elementsEqual([13, 10, 13, 10]) }) else { return }
        buffer.moveReaderIndex(forwardBy: end + 4)
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3, requestLine[0] == "CONNECT" else {
            return fail(context: context, reply: "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
        }
        let target = String(requestLine[1])
        let authorization = lines.dropFirst().first { $0.lowercased().hasPrefix("proxy-authorization:") }
            .map { String($0.dropFirst("proxy-authorization:".count)).trimmingCharacters(in: .whitespaces) }
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
            return fail(context: context, reply: "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        }
        connect(
            context: context, host: String(target[..<colon]), port: port, tunnel: .init(target: target, authorization: authorization),
            success: Array("HTTP/1.1 200 Connection Established\r\n\r\n".utf8),
            failure: Array("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n".utf8))
    }

    // MARK: SOCKS5

    private func readGreeting(context: ChannelHandlerContext) {
        guard buffer.readableBytes >= 2, let view = buffer.getBytes(at: buffer.readerIndex, length: 2) else { return }
        let count = Int(view[1])
        guard let methods = buffer.getBytes(at: buffer.readerIndex + 2, length: count) else { return }
        buffer.moveReaderIndex(forwardBy: 2 + count)
        guard view[0] == 5, methods.contains(0) else { return fail(context: context, bytes: [5, 0xFF]) }
        stage = .request
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: [5, 0])), promise: nil)
        if buffer.readableBytes > 0 { readSOCKSRequest(context: context) }
    }

    private func readSOCKSRequest(context: ChannelHandlerContext) {
        guard let head = buffer.getBytes(at: buffer.readerIndex, length: 4) else { return }
        let host: String
        let addressLength: Int
        switch head[3] {
        case 1:
            guard let address = buffer.getBytes(at: buffer.readerIndex + 4, length: 4) else { return }
            host = address.map(String.init).joined(separator: ".")
            addressLength = 4
        case 3:
            guard let length = buffer.getBytes(at: buffer.readerIndex + 4, length: 1)?.first,
                let name = buffer.getBytes(at: buffer.readerIndex + 5, length: Int(length))
            else { return }
            host = String(decoding: name, as: UTF8.self)
            addressLength = 1 + Int(length)
        case 4:
            guard let address = buffer.getBytes(at: buffer.readerIndex + 4, length: 16) else { return }
            host = address == [UInt8](repeating: 0, count: 15) + [1] ? "::1" : "ipv6"
            addressLength = 16
        default:
            return fail(context: context, bytes: [5, 8, 0, 1, 0, 0, 0, 0, 0, 0])
        }
        guard let portBytes = buffer.getBytes(at: buffer.readerIndex + 4 + addressLength, length: 2) else { return }
        buffer.moveReaderIndex(forwardBy: 4 + addressLength + 2)
        guard head[0] == 5, head[1] == 1 else { return fail(context: context, bytes: [5, 7, 0, 1, 0, 0, 0, 0, 0, 0]) }
        let port = Int(portBytes[0]) << 8 | Int(portBytes[1])
        connect(
            context: context, host: host, port: port, tunnel: .init(target: "\(host):\(port)", authorization: nil),
            success: [5, 0, 0, 1, 0, 0, 0, 0, 0, 0], failure: [5, 2, 0, 1, 0, 0, 0, 0, 0, 0])
    }

    // MARK: Tunnel

    private func connect(
        context: ChannelHandlerContext, host: String, port: Int, tunnel: MockProxyServer.Tunnel, success: [UInt8], failure: [UInt8]
    ) {
        guard MockProxyServer.isLocal(host) else {
            proxy.refused(tunnel.target)
            return fail(context: context, bytes: failure)
        }
        stage = .connecting
        let downstream = context.channel
        let connection = ClientBootstrap(group: context.eventLoop)
            .channelInitializer { upstream in
                upstream.eventLoop.makeCompletedFuture {
                    try upstream.pipeline.syncOperations.addHandler(TunnelHandler(partner: downstream))
                }
            }
            .connect(host: host == "localhost" ? "127.0.0.1" : host, port: port)
        connection.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let upstream):
                self.proxy.opened(tunnel)
                context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(bytes: success)), promise: nil)
                do {
                    try context.pipeline.syncOperations.addHandler(TunnelHandler(partner: upstream))
                } catch {
                    context.close(promise: nil)
                    upstream.close(promise: nil)
                    return
                }
                if self.buffer.readableBytes > 0 { upstream.writeAndFlush(self.buffer, promise: nil) }
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            case .failure:
                self.proxy.refused(tunnel.target)
                self.fail(context: context, bytes: failure)
            }
        }
    }

    private func fail(context: ChannelHandlerContext, reply: String) {
        fail(context: context, bytes: Array(reply.utf8))
    }

    private func fail(context: ChannelHandlerContext, bytes: [UInt8]) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// Writes what one side of a tunnel reads to the other side.
private final class TunnelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel

    init(partner: any Channel) {
        self.partner = partner
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner.write(unwrapInboundIn(data), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
