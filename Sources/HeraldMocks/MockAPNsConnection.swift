#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOHTTP2
import NIOSSL

/// One connection of the mock APNs, living on its event loop, last in the connection's
/// pipeline. Its stream handlers report to it; it counts streams and requests and injects the
/// connection-level behaviour: the stream limit raised after the first valid provider token,
/// GOAWAY after a number of streams, an abrupt close after a number of requests.
final class MockAPNsConnection: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let server: MockAPNsServer
    /// The limit to announce once a request brings a valid provider token (nil: nothing to raise).
    private var raiseTo: Int?
    private var context: ChannelHandlerContext?
    private var streams = 0
    private var openStreams = 0
    private var requests = 0
    private var goAwaySent = false
    private var highestStreamID = HTTP2StreamID(0)
    private var dropped = false

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

    // MARK: Reports from the stream handlers

    /// A client stream began (streams begin in id order).
    func streamOpened(_ streamID: HTTP2StreamID?) {
        streams += 1
        openStreams += 1
        let open = openStreams
        let limited = raiseTo != nil
        server.record {
            $0.peakStreams = max($0.peakStreams, open)
            if limited { $0.peakStreamsBeforeRaise = max($0.peakStreamsBeforeRaise, open) }
        }
        if let streamID { highestStreamID = max(highestStreamID, streamID) }
    }

    func streamClosed() {
        openStreams -= 1
        // After a GOAWAY the connection ends with its last answered stream.
        if goAwaySent, openStreams == 0, !dropped, let context {
            context.close(promise: nil)
        }
    }

    /// A request arrived whole; true if the connection is to be dropped instead of answering it.
    func requestArrived() -> Bool {
        requests += 1
        let every = server.behavior.goAwayAfterStreams
        if every > 0, requests >= every, !goAwaySent, let context {
            // Once the frames already read are dealt with, naming the last stream opened by then:
            // those are answered, the client's later ones are refused. (Written while
            // swift-nio-http2 is still handing out a read's frames, a GOAWAY strands streams.)
            goAwaySent = true
            context.eventLoop.assumeIsolated().execute { self.goAway(lastStreamID: self.highestStreamID) }
        }
        let after = server.behavior.dropConnectionAfterRequests
        return after > 0 && requests >= after && !dropped && server.takeConnectionDrop()
    }

    /// A request carried a valid provider token: lift the one-stream limit, as Apple does.
    func authenticated() {
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
    }

    /// Closes the TCP connection with a reset, beneath TLS and HTTP/2: no close_notify, no GOAWAY,
    /// and no answer for anything still in flight.
    func drop() {
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
