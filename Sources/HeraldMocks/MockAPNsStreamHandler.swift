import HeraldCore
import NIOCore
import NIOHTTP1
import NIOHTTP2
import struct Foundation.UUID

/// Collects one HTTP/2 stream's request and writes the mock's answer (after the configured
/// delay), telling its connection about the stream and the request.
final class MockAPNsStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: MockAPNsServer
    private let connection: MockAPNsConnection
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var opened = false

    init(server: MockAPNsServer, connection: MockAPNsConnection) {
        self.server = server
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        opened = true
        connection.streamOpened(try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID))
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if opened {
            opened = false
            connection.streamClosed()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            server.record { $0.requests += 1 }
            let answer = server.answer(head: head, body: body)
            if answer.authenticated { connection.authenticated() }
            if connection.requestArrived() {
                connection.drop()
                return
            }
            let delay = server.behavior.responseDelay
            if delay > .zero {
                context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
                    self.write(answer, context: context)
                }
            } else {
                write(answer, context: context)
            }
        }
    }

    private func write(_ answer: MockAPNsServer.Answer, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var headers = HTTPHeaders([("apns-id", answer.apnsID)])
        var responseBody: ByteBuffer?
        if let reason = answer.reason {
            var json = #"{"reason":"\#(reason)""#
            if let timestamp = answer.timestamp { json += #","timestamp":\#(timestamp)"# }
            json += "}"
            responseBody = ByteBuffer(string: json)
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: String(json.utf8.count))
        } else {
            headers.add(name: "apns-unique-id", value: UUID().lowercasedString)
        }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: answer.status, headers: headers))), promise: nil)
        if let responseBody { context.write(wrapOutboundOut(.body(.byteBuffer(responseBody))), promise: nil) }
        let server = self.server
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenSuccess {
            server.record { $0.answered += 1 }
        }
    }
}
