import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import HeraldHTTP

/// Herald's client framing against an implementation it shares no code with: swift-nio-http2's
/// `NIOHTTP2Handler` as a server, which checks every frame it receives (framing, HPACK, stream
/// states, flow control) and answers each request with its body's length.
@Suite struct HTTP2IndependentPeerTests {
    /// Answers each request once its END_STREAM arrives, with `x-received` the bytes of its body,
    /// and grants the window its DATA took a frame at a time (as a server without spare buffer would).
    private final class Answerer: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        private var received: [HTTP2StreamID: Int] = [:]
        private(set) var pings = 0

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.payload {
            case .headers(let headers):
                received[frame.streamID] = 0
                if headers.endStream { answer(frame.streamID, context: context) }
            case .data(let data):
                let length = data.data.readableBytes
                received[frame.streamID, default: 0] += length
                if length > 0 {
                    context.write(
                        wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: length))),
                        promise: nil)
                }
                if data.endStream { answer(frame.streamID, context: context) }
            default:
                break
            }
        }

        private func answer(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
            let length = received.removeValue(forKey: streamID) ?? 0
            let headers: HPACKHeaders = [":status": "200", "x-received": "\(length)"]
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
            let body = HTTP2Frame.FramePayload.Data(data: .byteBuffer(ByteBuffer(string: "ok \(Int(streamID))")), endStream: true)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(body))), promise: nil)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.flush()
        }
    }

    /// Moves bytes both ways until neither side writes more.
    private func pump(_ client: EmbeddedChannel, _ server: EmbeddedChannel) throws {
        for _ in 0..<10_000 {
            client.embeddedEventLoop.run()
            server.embeddedEventLoop.run()
            var moved = false
            while let data = try client.readOutbound(as: IOData.self) {
                guard case .byteBuffer(let bytes) = data else { continue }
                try server.writeInbound(bytes)
                moved = true
            }
            while let data = try server.readOutbound(as: IOData.self) {
                guard case .byteBuffer(let bytes) = data else { continue }
                try client.writeInbound(bytes)
                moved = true
            }
            if !moved { return }
        }
        Issue.record("the two sides never went quiet")
    }

    @Test func everyRequestIsAnsweredBeyondTheFlowControlWindow() throws {
        let handler = HTTP2ConnectionHandler(requestTimeout: .seconds(30))
        let client = EmbeddedChannel()
        try client.pipeline.syncOperations.addHandler(handler)
        let server = EmbeddedChannel()
        try server.pipeline.syncOperations.addHandler(
            NIOHTTP2Handler(mode: .server, initialSettings: [HTTP2Setting(parameter: .maxConcurrentStreams, value: 7)]))
        try server.pipeline.syncOperations.addHandler(Answerer())
        try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 2)).wait()

        // 60 bodies of 4 KiB, 240 KiB in all: well past the connection's 64 KiB window.
        let requests = (0..<60).map { index in
            HTTP2Request(
                headers: [
                    ":method": "POST", ":scheme": "https", ":authority": "peer", ":path": "/3/device/\(index)",
                    "apns-topic": "com.example",
                ],
                body: ByteBuffer(repeating: UInt8(index), count: 4096))
        }
        let batch = HTTP2ConnectionHandler.Batch(requests: requests, promise: client.eventLoop.makePromise())
        handler.enqueue(batch)
        try pump(client, server)

        let received = batch.results.map { response -> String in
            guard case .answered(200, let headers, let body)? = response else { return "\(String(describing: response))" }
            return "\(headers.first(name: "x-received") ?? "?") \(body.map { String(buffer: $0) } ?? "")"
        }
        #expect(received == (0..<60).map { "4096 ok \(2 * $0 + 1)" })
        #expect(handler.maximumStreams == 7)
        #expect(handler.openStreams == 0)
        #expect(client.isActive && server.isActive)
    }

    @Test func aGoAwayFromThePeerReturnsTheStreamsItDidNotProcess() throws {
        let handler = HTTP2ConnectionHandler(requestTimeout: .seconds(30))
        let client = EmbeddedChannel()
        try client.pipeline.syncOperations.addHandler(handler)
        let server = EmbeddedChannel()
        try server.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .server))
        try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 2)).wait()
        try pump(client, server)  // prefaces and acknowledgements

        let requests = (0..<3).map { _ in HTTP2Request(headers: [":method": "GET", ":scheme": "https", ":path": "/"], body: ByteBuffer()) }
        let batch = HTTP2ConnectionHandler.Batch(requests: requests, promise: client.eventLoop.makePromise())
        handler.enqueue(batch)
        try pump(client, server)
        // The server processed stream 1 only and goes away; it answers stream 1 after.
        server.writeAndFlush(
            HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil)), promise: nil)
        let answer = HTTP2Frame(streamID: 1, payload: .headers(.init(headers: [":status": "204"], endStream: true)))
        server.writeAndFlush(answer, promise: nil)
        try pump(client, server)
        #expect(HTTP2TestServer.describe(batch.results) == ["204", "not sent", "not sent"])
        #expect(!client.isActive, "drained after the GOAWAY, the connection closes")
    }
}
