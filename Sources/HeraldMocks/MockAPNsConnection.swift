import HeraldCore
import HeraldHTTP
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One connection of the mock APNs, living on its event loop, right after the HTTP/2 handler.
///
/// It works on HTTP/2 frames, not on a channel per stream: it gathers each stream's HEADERS and
/// DATA, asks the server for the answer, and writes the answer's HEADERS (and DATA) itself. That
/// keeps the mock several times cheaper per request than stream channels with HTTP/1 codecs, so
/// that a benchmark measures the client, not the mock. It also injects the connection-level
/// behaviour: the stream limit raised after the first valid provider token, GOAWAY after a number
/// of requests, an abrupt close after a number of requests.
final class MockAPNsConnection: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// A request still arriving: its headers, and its body so far.
    private struct Stream {
        var headers: HPACKHeaders
        var body: ByteBuffer?
    }

    private let server: MockAPNsServer
    /// The limit to announce once a request brings a valid provider token (nil: nothing to raise).
    private var raiseTo: Int?
    private var context: ChannelHandlerContext?
    private var streams: [HTTP2StreamID: Stream] = [:]
    /// Streams begun and not yet answered or reset.
    private var openStreams = 0
    /// Whether this connection has had more than one stream open at once.
    private var wentConcurrent = false
    private var requests = 0
    /// A GOAWAY is due once the current read is dealt with.
    private var goAwayScheduled = false
    private var goAwaySent = false
    private var highestStreamID = HTTP2StreamID(0)
    private var dropped = false
    /// Inside a read: answers wait for `channelReadComplete`, one flush for all of them.
    private var inRead = false
    /// Without a stream multiplexer, nobody else grants the client window for its DATA.
    private var receiveWindow = HTTP2ReceiveWindow()

    init(server: MockAPNsServer, raiseTo: Int?) {
        self.server = server
        self.raiseTo = raiseTo
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(HTTP2ReceiveWindow.opening), promise: nil)
        context.fireChannelActive()
    }

    // MARK: Frames

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inRead = true
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if var stream = streams[frame.streamID] {
                // Trailers: the request ends here.
                stream.headers.add(contentsOf: headers.headers)
                streams[frame.streamID] = stream
            } else {
                streamOpened(frame.streamID)
                streams[frame.streamID] = Stream(headers: headers.headers, body: nil)
            }
            if headers.endStream { requestEnded(frame.streamID, context: context) }
        case .data(let payload):
            if let update = receiveWindow.received(payload) { context.writeAndFlush(wrapOutboundOut(update), promise: nil) }
            guard var stream = streams[frame.streamID] else { return }
            if case .byteBuffer(var chunk) = payload.data {
                if stream.body == nil {
                    stream.body = chunk
                } else {
                    stream.body!.writeBuffer(&chunk)
                }
            }
            streams[frame.streamID] = stream
            if payload.endStream { requestEnded(frame.streamID, context: context) }
        case .rstStream:
            if streams.removeValue(forKey: frame.streamID) != nil { streamClosed() }
        case .priority, .settings, .pushPromise, .ping, .goAway, .windowUpdate, .alternativeService, .origin:
            break
        }
    }

    private func requestEnded(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let stream = streams[streamID] else { return }
        // The stream stays listed (and open) until its answer is written.
        streams[streamID] = Stream(headers: [:], body: nil)
        let behavior = server.behavior
        let answer = server.answer(headers: stream.headers, body: stream.body ?? ByteBuffer(), behavior: behavior)
        if answer.authenticated { authenticated() }
        if requestArrived(behavior) {
            drop()
            return
        }
        let delay = behavior.responseDelay
        if delay > .zero {
            context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
                self.write(answer, on: streamID)
            }
        } else {
            write(answer, on: streamID)
        }
    }

    private func write(_ answer: MockAPNsServer.Answer, on streamID: HTTP2StreamID) {
        guard let context, !dropped, streams.removeValue(forKey: streamID) != nil else { return }
        // The ids differ in every answer: kept out of HPACK's dynamic tables (on both sides), like
        // Herald's paths.
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(answer.status.code))
        headers.add(name: "apns-id", value: answer.apnsID, indexing: .nonIndexable)
        if let reason = answer.reason {
            var json = #"{"reason":"\#(reason)""#
            if let timestamp = answer.timestamp { json += #","timestamp":\#(timestamp)"# }
            json += "}"
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: String(json.utf8.count))
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
            let body = HTTP2Frame.FramePayload.Data(data: .byteBuffer(ByteBuffer(string: json)), endStream: true)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(body))), promise: nil)
        } else {
            if let uniqueID = answer.uniqueID { headers.add(name: "apns-unique-id", value: uniqueID, indexing: .nonIndexable) }
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))), promise: nil)
        }
        // Flushed once the read that brought the request is dealt with (`channelReadComplete`),
        // or now if the answer was delayed.
        if !inRead { context.flush() }
        server.record { $0.answered += 1 }
        streamClosed()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        inRead = false
        context.flush()
        context.fireChannelReadComplete()
    }

    // MARK: Counting streams and requests

    /// A client stream began (streams begin in id order).
    private func streamOpened(_ streamID: HTTP2StreamID) {
        openStreams += 1
        let open = openStreams
        let limited = raiseTo != nil
        let firstConcurrency = open > 1 && !wentConcurrent
        if firstConcurrency { wentConcurrent = true }
        server.record {
            $0.peakStreams = max($0.peakStreams, open)
            if limited { $0.peakStreamsBeforeRaise = max($0.peakStreamsBeforeRaise, open) }
            if firstConcurrency { $0.concurrentConnections += 1 }
        }
        highestStreamID = max(highestStreamID, streamID)
    }

    private func streamClosed() {
        openStreams -= 1
        // After a GOAWAY the connection ends with its last answered stream.
        if goAwaySent, openStreams == 0, !dropped, let context {
            context.flush()
            context.close(promise: nil)
        }
    }

    /// A request arrived whole; true if the connection is to be dropped instead of answering it.
    private func requestArrived(_ behavior: MockAPNsServer.Behavior) -> Bool {
        requests += 1
        server.record { $0.requests += 1 }
        let every = behavior.goAwayAfterStreams
        if every > 0, requests >= every, !goAwayScheduled, let context {
            // Once the frames already read are dealt with, naming the last stream opened by then:
            // those are answered, the client's later ones are refused. (Written while
            // swift-nio-http2 is still handing out a read's frames, a GOAWAY strands streams.)
            goAwayScheduled = true
            context.eventLoop.assumeIsolated().execute { self.goAway(lastStreamID: self.highestStreamID) }
        }
        let after = behavior.dropConnectionAfterRequests
        return after > 0 && requests >= after && !dropped && server.takeConnectionDrop()
    }

    /// A request carried a valid provider token: lift the one-stream limit, as Apple does.
    private func authenticated() {
        guard let limit = raiseTo, let context else { return }
        raiseTo = nil
        server.record { $0.streamLimitRaises += 1 }
        let settings = HTTP2Frame(
            streamID: .rootStream,
            payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: limit)])))
        context.writeAndFlush(wrapOutboundOut(settings), promise: nil)
    }

    // MARK: Faults

    /// GOAWAY naming `lastStreamID`: streams up to it are answered; the peer's later streams are
    /// ignored here (swift-nio-http2 drops them) and refused by the peer's own GOAWAY handling.
    private func goAway(lastStreamID: HTTP2StreamID) {
        guard let context else { return }
        goAwaySent = true
        server.record { $0.goAways += 1 }
        let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        if openStreams == 0 { context.close(promise: nil) }
    }

    /// Closes the TCP connection with a reset, beneath TLS and HTTP/2: no close_notify, no GOAWAY,
    /// and no answer for anything still in flight.
    private func drop() {
        guard let context, !dropped else { return }
        dropped = true
        server.record { $0.droppedConnections += 1 }
        let channel = context.channel
        if let socket = channel as? any SocketOptionProvider {
            // SO_LINGER 0: close(2) sends RST instead of FIN.
            _ = socket.setSoLinger(linger(l_onoff: 1, l_linger: 0))
        }
        // Closing from the TLS handler's own context goes straight to the socket, skipping it.
        if let tls = try? channel.pipeline.syncOperations.context(handlerType: NIOSSLServerHandler.self) {
            tls.close(promise: nil)
        } else {
            channel.close(promise: nil)
        }
    }
}
