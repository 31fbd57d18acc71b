import NIOCore
import NIOHPACK
import NIOHTTP2

/// Runs requests over one HTTP/2 connection, working on the connection's frames directly.
///
/// swift-nio-http2 does the protocol (framing, HPACK, flow control, stream states); this handler
/// only opens a stream per request, as many at once as the server's `SETTINGS_MAX_CONCURRENT_STREAMS`
/// allows (APNs starts at 1 with token auth and raises it after the first request), and matches
/// the answers to the requests. Working below the stream-channel API saves a channel, a pipeline
/// and several promises per request, which is most of the cost of a provider send; the writes of
/// the requests queued in one event-loop tick go out with one flush.
final class HTTP2ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = Never
    typealias OutboundIn = Never
    typealias OutboundOut = HTTP2Frame

    /// Requests handed over together; the promise completes when each has its response.
    final class Batch {
        let requests: [HTTP2Request]
        var results: [HTTP2Response?]
        var remaining: Int
        let promise: EventLoopPromise<[HTTP2Response?]>

        init(requests: [HTTP2Request], promise: EventLoopPromise<[HTTP2Response?]>) {
            self.requests = requests
            self.results = Array(repeating: nil, count: requests.count)
            self.remaining = requests.count
            self.promise = promise
            if requests.isEmpty { promise.succeed([]) }
        }

        func finish(_ index: Int, _ response: HTTP2Response) {
            guard results[index] == nil else { return }
            results[index] = response
            remaining -= 1
            if remaining == 0 { promise.succeed(results) }
        }
    }

    private struct Pending {
        let batch: Batch
        var next: Int
    }

    private struct InFlight {
        let batch: Batch
        let index: Int
        /// When its answer is due: past it, the request fails as unanswered.
        let deadline: NIODeadline
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
    }

    /// How long a request may wait for its answer.
    let requestTimeout: TimeAmount
    private var sweep: Scheduled<Void>?

    private var context: ChannelHandlerContext?
    private var queue: [Pending] = []
    private var queueHead = 0
    private var inFlight: [HTTP2StreamID: InFlight] = [:]
    /// Stream ids, the server's limit, whether the connection takes requests.
    private var streams: HTTP2StreamStateMachine
    /// Called on the event loop when the connection stops taking requests (GOAWAY, closed).
    var onUnusable: (() -> Void)?

    /// The connection's receive window: without swift-nio-http2's stream multiplexer, granting
    /// window for what the server sends is this handler's job.
    private var receiveWindow = HTTP2ReceiveWindow()

    /// - Parameter firstStreamID: 1 but in tests of running out of stream ids.
    init(requestTimeout: TimeAmount, firstStreamID: Int32 = 1) {
        self.requestTimeout = requestTimeout
        self.streams = HTTP2StreamStateMachine(firstStreamID: firstStreamID)
    }

    /// Streams open now (for tests).
    var openStreams: Int { streams.openStreams }
    /// The server's limit on open streams as last set (for tests).
    var maximumStreams: Int { streams.maximumStreams }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleSweep(context)
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        // The HTTP/2 handler before this one has written the preface; widen the 64 KiB default.
        context.writeAndFlush(wrapOutboundOut(HTTP2ReceiveWindow.opening), promise: nil)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        sweep?.cancel()
        sweep = nil
    }

    // MARK: Deadlines

    /// Looks for overdue requests a few times per `requestTimeout`: one timer per connection
    /// rather than one per request.
    private func scheduleSweep(_ context: ChannelHandlerContext) {
        let interval = TimeAmount.nanoseconds(max(requestTimeout.nanoseconds / 4, TimeAmount.milliseconds(10).nanoseconds))
        sweep = context.eventLoop.assumeIsolated().scheduleTask(in: interval) {
            self.expireOverdueRequests()
            if let context = self.context { self.scheduleSweep(context) }
        }
    }

    /// Fails the requests whose answer is overdue (and resets their streams): a server that
    /// accepted a stream and never answers must not hold its sender forever. Such a connection
    /// takes no new requests.
    private func expireOverdueRequests() {
        guard let context, !inFlight.isEmpty else { return }
        let now = NIODeadline.now()
        let overdue = inFlight.filter { $0.value.deadline <= now }.map(\.key)
        guard !overdue.isEmpty else { return }
        for streamID in overdue {
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
            finish(streamID, .failed("no answer within \(requestTimeout)"))
        }
        context.flush()
        stopTaking(streams.stopTaking())
    }

    // MARK: Requests

    /// Queues the batch; its promise completes when every request has a response or an error.
    func enqueue(_ batch: Batch) {
        guard streams.isActive, context != nil else {
            for index in batch.requests.indices { batch.finish(index, .notSent) }
            return
        }
        guard !batch.requests.isEmpty else { return }
        queue.append(Pending(batch: batch, next: 0))
        startStreams()
    }

    private func startStreams() {
        guard let context else { return }
        let now = NIODeadline.now()
        while queueHead < queue.count {
            let streamID: HTTP2StreamID
            switch streams.openStream() {
            case .open(let id):
                streamID = id
            case .atLimit, .refused:
                return
            case .stop(let action):
                // Out of stream ids: what has not started goes elsewhere.
                stopTaking(action)
                return
            }
            let index = queue[queueHead].next
            let batch = queue[queueHead].batch
            queue[queueHead].next += 1
            if queue[queueHead].next == batch.requests.count {
                queueHead += 1
                // Started batches leave the queue soon: each holds its requests' headers and
                // bodies, which must not pile up behind a long-lived connection.
                if queueHead == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    queueHead = 0
                } else if queueHead >= 16, queueHead * 2 > queue.count {
                    queue.removeFirst(queueHead)
                    queueHead = 0
                }
            }
            let request = batch.requests[index]
            inFlight[streamID] = InFlight(batch: batch, index: index, deadline: now + requestTimeout)
            // The HTTP/2 handler refuses a new stream once it has seen the server's GOAWAY, which
            // may be before this handler sees the frame: such a request never left.
            let opened = context.eventLoop.makePromise(of: Void.self)
            opened.futureResult.whenFailure { [weak self] _ in
                self?.finish(streamID, .notSent)
                self?.startStreams()
            }
            let empty = request.body.readableBytes == 0
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: request.headers, endStream: empty)))),
                promise: opened)
            if !empty {
                context.write(
                    wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(request.body), endStream: true)))),
                    promise: nil)
            }
            // A flush per request, so that its DATA leaves in stream order (see
            // `FlushCoalescingHandler`, which makes these one flush of the socket per tick).
            context.flush()
        }
    }

    private func finish(_ streamID: HTTP2StreamID, _ response: HTTP2Response) {
        guard let request = inFlight.removeValue(forKey: streamID) else { return }
        request.batch.finish(request.index, response)
        switch streams.streamClosed() {
        case .openMore, .none:
            // The callers open more streams once they are done with the frame.
            break
        case .closeConnection:
            // Drained after a GOAWAY: nothing more will come on this connection.
            context?.close(promise: nil)
        }
    }

    // MARK: Frames

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if var request = inFlight[frame.streamID] {
                if let status = headers.headers.first(name: ":status").flatMap({ Int($0) }) {
                    // Informational (1xx) heads come before the final one.
                    if status >= 200 {
                        request.status = status
                        request.headers = headers.headers
                    }
                } else {
                    request.headers.add(contentsOf: headers.headers)  // trailers
                }
                inFlight[frame.streamID] = request
                if headers.endStream { complete(frame.streamID) }
            }
        case .data(let data):
            if let update = receiveWindow.received(data) { context.writeAndFlush(wrapOutboundOut(update), promise: nil) }
            if var request = inFlight[frame.streamID] {
                if case .byteBuffer(var bytes) = data.data {
                    if request.body == nil {
                        request.body = bytes
                    } else {
                        request.body!.writeBuffer(&bytes)
                    }
                }
                inFlight[frame.streamID] = request
                if data.endStream { complete(frame.streamID) }
            }
        case .rstStream(let code):
            // REFUSED_STREAM means the server did nothing with it: safe to send again.
            finish(frame.streamID, code == .refusedStream ? .notSent : .failed("stream reset: \(code)"))
            startStreams()
        case .settings(.settings(let settings)):
            let limit = settings.last { $0.parameter == .maxConcurrentStreams }?.value
            switch streams.serverSettings(maximumConcurrentStreams: limit) {
            case .openMore:
                // The server holds to its old limit until it has our acknowledgement, which the
                // HTTP/2 handler writes after passing the frame on: open the new streams after it.
                context.eventLoop.assumeIsolated().execute { self.startStreams() }
            case .none, .closeConnection:
                break
            }
        case .goAway(let lastStreamID, _, _):
            // Streams above the last one the server processed were not processed: send them again.
            stopTaking(streams.stopTaking())
            for streamID in inFlight.keys where streamID > lastStreamID {
                finish(streamID, .notSent)
            }
        case .priority, .settings(.ack), .pushPromise, .ping, .windowUpdate, .alternativeService, .origin:
            break
        }
    }

    private func complete(_ streamID: HTTP2StreamID) {
        guard let request = inFlight[streamID] else { return }
        guard let status = request.status else {
            finish(streamID, .failed("response without a status"))
            return
        }
        finish(streamID, .answered(status: status, headers: request.headers, body: request.body))
        startStreams()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTaking(streams.connectionClosed())
        // Requests on the wire may or may not have reached the server; the rest never left.
        for streamID in Array(inFlight.keys) {
            finish(streamID, .failed("connection closed"))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream-level error concerns one request; anything else ends the connection.
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            finish(streamError.streamID, .failed("\(streamError.baseError)"))
            startStreams()
            return
        }
        stopTaking(streams.stopTaking())
        context.close(promise: nil)
    }

    /// Acts on the machine's decision to stop taking requests.
    private func stopTaking(_ action: HTTP2StreamStateMachine.StopAction) {
        switch action {
        case .none:
            return
        case .stopTaking(let close):
            // Queued requests that have not started go back to the caller to be sent elsewhere.
            while queueHead < queue.count {
                let pending = queue[queueHead]
                for index in pending.next..<pending.batch.requests.count {
                    pending.batch.finish(index, .notSent)
                }
                queueHead += 1
            }
            queue.removeAll()
            queueHead = 0
            onUnusable?()
            if close { context?.close(promise: nil) }
        }
    }
}
