import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One answer of a request-per-message mock (FCM, Web Push, WNS): `content-length` is added.
struct MockHTTPResponse {
    var status: HTTPResponseStatus
    var headers: [(String, String)] = []
    var body: ByteBuffer?
}

/// The listener the request-per-message mocks share: TLS on 127.0.0.1 offering `protocols`
/// (ALPN), HTTP/2 streams or HTTP/1.1 requests collected whole and handed to `respond`.
enum MockHTTPListener {
    static func bind(
        group: any EventLoopGroup, tls: MockTLS, protocols: [String], host: String, port: Int,
        respond: @escaping @Sendable (HTTPRequestHead, ByteBuffer) -> MockHTTPResponse
    ) async throws -> (channel: any Channel, port: Int) {
        let context = try tls.serverContext(alpn: protocols)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.configureHTTP2SecureUpgrade(
                    h2ChannelConfigurator: { channel in
                        channel.configureHTTP2Pipeline(
                            mode: .server,
                            initialLocalSettings: [
                                HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                                HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                            ],
                            targetWindowSize: 1 << 20
                        ) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandlers([
                                    HTTP2FramePayloadToHTTP1ServerCodec(), MockHTTPRequestHandler(respond: respond),
                                ])
                            }
                        }.map { _ in }
                    },
                    http1ChannelConfigurator: { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                            try channel.pipeline.syncOperations.addHandler(MockHTTPRequestHandler(respond: respond))
                        }
                    })
            }
            .bind(host: host, port: port).get()
        guard let bound = channel.localAddress?.port else {
            try? await channel.close()
            throw MockServerError(message: "the mock has no port")
        }
        return (channel, bound)
    }
}

/// Collects one request (an HTTP/2 stream, or the next request of an HTTP/1.1 connection) and
/// writes the mock's answer.
private final class MockHTTPRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let respond: @Sendable (HTTPRequestHead, ByteBuffer) -> MockHTTPResponse
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(respond: @escaping @Sendable (HTTPRequestHead, ByteBuffer) -> MockHTTPResponse) {
        self.respond = respond
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            self.head = nil
            let response = respond(head, body)
            var headers = HTTPHeaders(response.headers)
            headers.add(name: "content-length", value: String(response.body?.readableBytes ?? 0))
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: response.status, headers: headers))), promise: nil)
            if let body = response.body, body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
