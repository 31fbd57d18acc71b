import NIOCore
import NIOHPACK
import NIOHTTP2

/// Runs requests over one HTTP/2 connection: the client side of the protocol, framed here
/// directly on the TLS bytes.
///
/// It opens a stream per request, as many at once as the server's `SETTINGS_MAX_CONCURRENT_STREAMS`
/// allows (APNs starts at 1 with token auth and raises it after the first request), sends each
/// request's HEADERS (`HTTP2FrameEncoder`) and DATA within the server's flow-control windows, and
/// matches the answers (their header blocks decoded by `HPACKBlockDecoder`) to the requests. The
/// connection-level protocol is here too: the preface and SETTINGS (acknowledged), PING,
/// WINDOW_UPDATE both ways, RST_STREAM, GOAWAY; a server that breaks the framing rules gets a
/// GOAWAY and the connection closes, its requests on the wire failing as unanswered. Why this is
/// not swift-nio-http2's `NIOHTTP2Handler`: docs/decisions/0001-own-http2-client.md.
///
/// Everything written in one event-loop tick leaves in one buffer with one flush.
final class HTTP2ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = Never
    typealias OutboundIn = Never
    typealias OutboundOut = IOData

    /// What became of a batch: a response per request, and which requests were on the wire
    /// when the connection went down (their `.failed` may be sent again elsewhere).
    struct Completed: Sendable {
        let results: [HTTP2Response?]
        let lost: Set<Int>
    }

    /// Requests handed over together; the promise completes when each has its response.
    final class Batch {
        let requests: [HTTP2Request]
        var results: [HTTP2Response?]
        var remaining: Int
        /// Requests in flight when the connection went down.
        var lost: Set<Int> = []
        let promise: EventLoopPromise<Completed>

        init(requests: [HTTP2Request], promise: EventLoopPromise<Completed>) {
            self.requests = requests
            self.results = Array(repeating: nil, count: requests.count)
            self.remaining = requests.count
            self.promise = promise
            if requests.isEmpty { promise.succeed(Completed(results: [], lost: [])) }
        }

        func finish(_ index: Int, _ response: HTTP2Response) {
            guard results[index] == nil else { return }
            results[index] = response
            remaining -= 1
            if remaining == 0 { promise.succeed(Completed(results: results, lost: lost)) }
        }
    }

    private struct Pending {
        let batch: Batch
        var next: Int
    }

    /// One open stream: its request and what has come back so far.
    private struct Stream {
        let batch: Batch
        let index: Int
        /// When its answer is due: past it, the request fails as unanswered.
        let deadline: NIODeadline
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
        /// The part of the request's body still to send, waiting for flow-control window.
        var unsent: ByteBuffer?
        /// What the server lets this stream send (RFC 9113 §6.9).
        var sendWindow: Int
        /// DATA received on the stream since its receive window was last topped up.
        var received = 0
    }

    /// The SETTINGS this client sends: no server push, and generous receive windows.
    static let settings: [(UInt16, UInt32)] = [
        (HTTP2Wire.Setting.enablePush, 0),
        (HTTP2Wire.Setting.maxConcurrentStreams, 100),
        (HTTP2Wire.Setting.initialWindowSize, UInt32(streamReceiveWindow)),
        (HTTP2Wire.Setting.maxHeaderListSize, 1 << 16),
    ]
    /// Each stream's receive window, topped up once half of it is used.
    static let streamReceiveWindow = 1 << 20
    /// Streams are kept in a flat array by id; one that stays unanswered while this many younger
    /// ones open holds new streams back until it is answered or overdue (it bounds the array).
    static let maximumSpan = 4 * HTTP2StreamStateMachine.streamCeiling

    /// How long a request may wait for its answer.
    let requestTimeout: TimeAmount
    /// Whether header blocks sent and received are checked against RFC 9113 §8.2.
    let validatesHeaderBlocks: Bool
    /// The pool's window of streams in flight per connection, below the server's limit (nil: the
    /// server's limit alone).
    let window: HTTP2StreamWindow?
    private var sweep: Scheduled<Void>?

    private var context: ChannelHandlerContext?
    private var queue: [Pending] = []
    private var queueHead = 0
    /// Stream ids, the server's limit, whether the connection takes requests.
    private var streams: HTTP2StreamStateMachine
    /// Called on the event loop when the connection stops taking requests (GOAWAY, closed).
    var onUnusable: (() -> Void)?

    // MARK: Open streams, by id

    /// Open streams in id order: `slots[k]` is stream `headID + 2 × (k − slotsHead)`, nil once closed.
    /// Ids are handed out in order, so a new stream is always appended and most answers close the
    /// oldest: no hashing, no search.
    private var slots: [Stream?] = []
    private var slotsHead = 0
    private var headID: Int32 = 1

    // MARK: Framing

    private var decoder: HTTP2FrameDecoder
    private var encoder = HTTP2FrameEncoder()
    /// Frames written this tick, not yet handed to TLS.
    private var outbound = ByteBuffer()
    private var flushScheduled = false
    private var started = false
    /// Why the connection is closing, for the requests it fails.
    private var closeReason: String?
    private var receiveWindow = HTTP2ReceiveWindow()
    /// What the server lets this connection send (RFC 9113 §6.9).
    private var connectionSendWindow = HTTP2Wire.defaultWindowSize
    /// Each new stream's send window (the server's SETTINGS_INITIAL_WINDOW_SIZE).
    private var initialStreamWindow = HTTP2Wire.defaultWindowSize
    /// Streams whose request body waits for window, in the order they began waiting.
    private var blocked: [Int32] = []

    /// - Parameters:
    ///   - answerFields: the fields of each answer handed back; all while `validatesHeaderBlocks`
    ///     is on, since every field is checked.
    ///   - firstStreamID: 1 but in tests of running out of stream ids.
    init(
        requestTimeout: TimeAmount, validatesHeaderBlocks: Bool = true, answerFields: HTTP2AnswerFields = .all,
        window: HTTP2StreamWindow? = nil,
        firstStreamID: Int32 = 1
    ) {
        self.requestTimeout = requestTimeout
        self.validatesHeaderBlocks = validatesHeaderBlocks
        self.window = window
        self.decoder = HTTP2FrameDecoder(keptFields: validatesHeaderBlocks ? .all : answerFields)
        self.streams = HTTP2StreamStateMachine(firstStreamID: firstStreamID)
    }

    /// Streams open now (for tests).
    var openStreams: Int { streams.openStreams }
    /// The server's limit on open streams as last set (for tests).
    var maximumStreams: Int { streams.maximumStreams }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        outbound = context.channel.allocator.buffer(capacity: 16_384)
        scheduleSweep(context)
        // Added to a connection already up (behind a proxy tunnel): no channelActive will come.
        if context.channel.isActive { start() }
    }

    func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        sweep?.cancel()
        sweep = nil
    }

    /// The preface, this client's SETTINGS, and a connection receive window widened from
    /// HTTP/2's 64 KiB.
    private func start() {
        guard !started else { return }
        started = true
        HTTP2FrameEncoder.writePreface(settings: Self.settings, into: &outbound)
        HTTP2FrameEncoder.writeWindowUpdate(streamID: 0, increment: HTTP2ReceiveWindow.size - HTTP2Wire.defaultWindowSize, into: &outbound)
        flushNow()
    }

    // MARK: Writing

    /// Hands what was written to TLS once the loop has run what is queued on it: one TLS record
    /// batch and one system call per tick however many requests and answers it saw.
    private func scheduleFlush() {
        guard !flushScheduled, let context else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            self.flushNow()
        }
    }

    private func flushNow() {
        guard let context, outbound.readableBytes > 0 else { return }
        context.write(wrapOutboundOut(.byteBuffer(outbound)), promise: nil)
        context.flush()
        // TLS has encrypted and let go of the bytes: the buffer is reused without a copy.
        outbound.clear()
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
        guard context != nil, slotsHead < slots.count else { return }
        let now = NIODeadline.now()
        // Deadlines grow with the stream ids: the overdue ones come first.
        var overdue: [Int32] = []
        for offset in slotsHead..<slots.count {
            guard let stream = slots[offset] else { continue }
            guard stream.deadline <= now else { break }
            overdue.append(headID + Int32(2 * (offset - slotsHead)))
        }
        guard !overdue.isEmpty else { return }
        for streamID in overdue {
            HTTP2FrameEncoder.writeRSTStream(streamID: streamID, errorCode: HTTP2Wire.ErrorCode.cancel, into: &outbound)
            finish(streamID, .failed("no answer within \(requestTimeout)"))
        }
        flushNow()
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
        guard context != nil else { return }
        openQueuedStreams()
        // A body queued behind others may go if the window has room.
        if !blocked.isEmpty, connectionSendWindow > 0 { resumeBlocked() }
        scheduleFlush()
    }

    /// Opens a stream for each queued request, as many as the server allows.
    private func openQueuedStreams() {
        let now = NIODeadline.now()
        while queueHead < queue.count, slots.count - slotsHead < Self.maximumSpan {
            let batch = queue[queueHead].batch
            let index = queue[queueHead].next
            let request = batch.requests[index]
            if validatesHeaderBlocks, let violation = request.headers.fieldSyntaxViolation {
                // Sending it again would not help: it fails here, without a stream.
                advanceQueue()
                batch.finish(index, .failed("not sent: its header block breaks RFC 9113 (\(violation))"))
                continue
            }
            // Below the pool's window too: what a reset connection loses is bounded by it.
            if let window, streams.openStreams >= window.value { return }
            let streamID: Int32
            switch streams.openStream() {
            case .open(let id):
                streamID = Int32(id)
            case .atLimit, .refused:
                return
            case .stop(let action):
                // Out of stream ids: what has not started goes elsewhere.
                stopTaking(action)
                return
            }
            advanceQueue()
            let offset = append(
                Stream(batch: batch, index: index, deadline: now + requestTimeout, sendWindow: initialStreamWindow), streamID)
            let empty = request.body.readableBytes == 0
            do {
                try encoder.writeHeaders(request.head, streamID: streamID, endStream: empty, into: &outbound)
            } catch {
                // Nothing of the stream left: its id is skipped, which closes it (RFC 9113 §5.1.1).
                finish(streamID, .notSent)
                continue
            }
            if !empty {
                if blocked.isEmpty {
                    send(request.body, offset: offset, streamID: streamID)
                } else {
                    // Bodies waiting for window go first.
                    slots[offset]!.unsent = request.body
                    blocked.append(streamID)
                }
            }
        }
    }

    /// Moves past the request just taken from the queue.
    private func advanceQueue() {
        queue[queueHead].next += 1
        guard queue[queueHead].next == queue[queueHead].batch.requests.count else { return }
        queueHead += 1
        // Started batches leave the queue soon: each holds its requests' headers and bodies,
        // which must not pile up behind a long-lived connection.
        queue.dropConsumedFront(head: &queueHead, atLeast: 16)
    }

    /// Sends as much of `body` as the windows allow, the rest once WINDOW_UPDATE makes room.
    /// True when all of it has gone.
    @discardableResult
    private func send(_ body: ByteBuffer, offset: Int, streamID: Int32) -> Bool {
        var body = body
        while body.readableBytes > 0 {
            let length = min(body.readableBytes, encoder.maxFrameSize, connectionSendWindow, slots[offset]!.sendWindow)
            guard length > 0 else { break }
            let chunk = body.readSlice(length: length)!
            HTTP2FrameEncoder.writeData(chunk, streamID: streamID, endStream: body.readableBytes == 0, into: &outbound)
            connectionSendWindow -= length
            slots[offset]!.sendWindow -= length
        }
        if body.readableBytes == 0 {
            slots[offset]!.unsent = nil
            return true
        }
        if slots[offset]!.unsent == nil { blocked.append(streamID) }
        slots[offset]!.unsent = body
        return false
    }

    /// Sends the waiting bodies the windows now allow, oldest first.
    private func resumeBlocked() {
        guard !blocked.isEmpty else { return }
        var stillBlocked: [Int32] = []
        for streamID in blocked {
            guard let offset = offset(of: streamID), let body = slots[offset]!.unsent else { continue }
            guard connectionSendWindow > 0 else {
                stillBlocked.append(streamID)
                continue
            }
            // `send` puts it on `blocked` again if it cannot all go; that list is replaced below.
            slots[offset]!.unsent = nil
            if !send(body, offset: offset, streamID: streamID) { stillBlocked.append(streamID) }
        }
        blocked = stillBlocked
        scheduleFlush()
    }

    private func finish(_ streamID: Int32, _ response: HTTP2Response) {
        guard let offset = offset(of: streamID) else { return }
        let stream = slots[offset]!
        remove(at: offset)
        if stream.unsent != nil { blocked.removeAll { $0 == streamID } }
        stream.batch.finish(stream.index, response)
        switch streams.streamClosed() {
        case .openMore, .none:
            // The callers open more streams once they are done with the frame.
            break
        case .closeConnection:
            // Drained after a GOAWAY: nothing more will come on this connection.
            flushNow()
            context?.close(promise: nil)
        }
    }

    // MARK: Stream slots

    /// Adds the stream just opened; returns its offset in `slots`.
    private func append(_ stream: Stream, _ streamID: Int32) -> Int {
        if slotsHead == slots.count {
            slots.removeAll(keepingCapacity: true)
            slotsHead = 0
            headID = streamID
        }
        precondition(streamID == headID + Int32(2 * (slots.count - slotsHead)), "stream ids out of order")
        slots.append(stream)
        return slots.count - 1
    }

    private func offset(of streamID: Int32) -> Int? {
        guard streamID >= headID, (streamID - headID) % 2 == 0 else { return nil }
        let offset = slotsHead + Int((streamID - headID) / 2)
        guard offset < slots.count, slots[offset] != nil else { return nil }
        return offset
    }

    private func remove(at offset: Int) {
        slots[offset] = nil
        while slotsHead < slots.count, slots[slotsHead] == nil {
            slotsHead += 1
            headID += 2
        }
        slots.dropConsumedFront(head: &slotsHead, atLeast: 1024)
    }

    /// The ids of the open streams.
    private var openStreamIDs: [Int32] {
        (slotsHead..<slots.count).compactMap { offset in slots[offset] == nil ? nil : headID + Int32(2 * (offset - slotsHead)) }
    }

    // MARK: Frames

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        decoder.append(unwrapInboundIn(data))
        do {
            while self.context != nil, closeReason == nil, let frame = try decoder.nextFrame() {
                try handle(frame)
            }
        } catch {
            connectionError(error)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushNow()
        context.fireChannelReadComplete()
    }

    private func handle(_ frame: HTTP2InboundFrame) throws(HTTP2ProtocolError) {
        switch frame {
        case .headers(let streamID, let head, let endStream):
            guard let offset = offset(of: streamID) else { return }
            if validatesHeaderBlocks, let violation = head.fields.fieldSyntaxViolation {
                HTTP2FrameEncoder.writeRSTStream(streamID: streamID, errorCode: HTTP2Wire.ErrorCode.protocolError, into: &outbound)
                finish(streamID, .failed("the answer's header block breaks RFC 9113 (\(violation))"))
                startStreams()
                return
            }
            if let status = head.status {
                // Informational (1xx) heads come before the final one.
                if status >= 200 {
                    slots[offset]!.status = status
                    slots[offset]!.headers = head.fields
                }
            } else {
                slots[offset]!.headers.add(contentsOf: head.fields)  // trailers
            }
            if endStream { complete(streamID) }
        case .data(let streamID, var data, let endStream, let flowControlled):
            if let increment = receiveWindow.received(bytes: flowControlled) {
                HTTP2FrameEncoder.writeWindowUpdate(streamID: 0, increment: increment, into: &outbound)
                scheduleFlush()
            }
            guard let offset = offset(of: streamID) else { return }
            if slots[offset]!.body == nil {
                slots[offset]!.body = data
            } else {
                slots[offset]!.body!.writeBuffer(&data)
            }
            if endStream {
                complete(streamID)
                return
            }
            slots[offset]!.received += flowControlled
            if slots[offset]!.received >= Self.streamReceiveWindow / 2 {
                HTTP2FrameEncoder.writeWindowUpdate(streamID: streamID, increment: slots[offset]!.received, into: &outbound)
                slots[offset]!.received = 0
                scheduleFlush()
            }
        case .rstStream(let streamID, let code):
            // REFUSED_STREAM means the server did nothing with it: safe to send again.
            finish(
                streamID, code == HTTP2Wire.ErrorCode.refusedStream ? .notSent : .failed("stream reset: \(HTTP2Wire.ErrorCode.name(code))"))
            startStreams()
        case .settings(let settings):
            try apply(settings)
        case .settingsAck:
            break
        case .ping(let opaque, let ack):
            guard !ack else { return }
            HTTP2FrameEncoder.writePing(opaque, ack: true, into: &outbound)
            scheduleFlush()
        case .goAway(let lastStreamID, _):
            // Streams above the last one the server processed were not processed: send them again.
            stopTaking(streams.stopTaking())
            for streamID in openStreamIDs where streamID > lastStreamID {
                finish(streamID, .notSent)
            }
        case .windowUpdate(let streamID, let increment):
            if streamID == 0 {
                connectionSendWindow += increment
                guard connectionSendWindow <= HTTP2Wire.largestWindowSize else {
                    throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.flowControlError, "connection window above 2^31-1")
                }
            } else if let offset = offset(of: streamID) {
                slots[offset]!.sendWindow += increment
                guard slots[offset]!.sendWindow <= HTTP2Wire.largestWindowSize else {
                    throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.flowControlError, "stream \(streamID)'s window above 2^31-1")
                }
            }
            resumeBlocked()
        case .ignored:
            break
        }
    }

    /// The server's SETTINGS: acknowledged at once, before any stream they allow (the server
    /// holds to its old limits until it has the acknowledgement).
    private func apply(_ settings: [(UInt16, UInt32)]) throws(HTTP2ProtocolError) {
        var limit: Int?
        var windowGrew = false
        for (identifier, value) in settings {
            switch identifier {
            case HTTP2Wire.Setting.headerTableSize:
                encoder.setHeaderTableSize(Int(value))
            case HTTP2Wire.Setting.maxConcurrentStreams:
                limit = Int(value)
            case HTTP2Wire.Setting.initialWindowSize:
                // Applies to the open streams too, by the difference (RFC 9113 §6.9.2).
                let delta = Int(value) - initialStreamWindow
                initialStreamWindow = Int(value)
                windowGrew = windowGrew || delta > 0
                for offset in slotsHead..<slots.count where slots[offset] != nil {
                    slots[offset]!.sendWindow += delta
                    guard slots[offset]!.sendWindow <= HTTP2Wire.largestWindowSize else {
                        throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.flowControlError, "a stream's window above 2^31-1")
                    }
                }
            case HTTP2Wire.Setting.maxFrameSize:
                encoder.maxFrameSize = Int(value)
            default:
                break
            }
        }
        HTTP2FrameEncoder.writeSettingsAck(into: &outbound)
        scheduleFlush()
        if windowGrew { resumeBlocked() }
        switch streams.serverSettings(maximumConcurrentStreams: limit) {
        case .openMore:
            startStreams()
        case .none, .closeConnection:
            break
        }
    }

    private func complete(_ streamID: Int32) {
        guard let offset = offset(of: streamID) else { return }
        let stream = slots[offset]!
        if stream.unsent != nil {
            // Answered before its body was all sent (RFC 9113 §8.1): the rest is not wanted.
            HTTP2FrameEncoder.writeRSTStream(streamID: streamID, errorCode: HTTP2Wire.ErrorCode.noError, into: &outbound)
            scheduleFlush()
        }
        guard let status = stream.status else {
            finish(streamID, .failed("response without a status"))
            startStreams()
            return
        }
        finish(streamID, .answered(status: status, headers: stream.headers, body: stream.body))
        window?.answered()
        startStreams()
    }

    /// The server broke the protocol: GOAWAY with the error, and the connection closes; what is
    /// on the wire fails as unanswered, what is queued goes elsewhere.
    private func connectionError(_ error: HTTP2ProtocolError) {
        guard closeReason == nil, let context else { return }
        closeReason = "\(error)"
        HTTP2FrameEncoder.writeGoAway(lastStreamID: 0, errorCode: error.code, into: &outbound)
        flushNow()
        stopTaking(streams.stopTaking())
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTaking(streams.connectionClosed())
        // Requests on the wire may or may not have reached the server; the rest never left.
        let reason = closeReason.map { "connection closed: \($0)" } ?? "connection closed"
        let lost = openStreamIDs
        window?.connectionLost(inFlight: lost.count)
        for streamID in lost {
            if let offset = offset(of: streamID), let stream = slots[offset] { stream.batch.lost.insert(stream.index) }
            finish(streamID, .failed(reason))
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A TLS or socket error ends the connection.
        if closeReason == nil { closeReason = "\(error)" }
        stopTaking(streams.stopTaking())
        context.close(promise: nil)
    }

    /// Takes no new request (a graceful shutdown): what is queued goes back as not sent, what is
    /// on the wire may finish; the connection closes once it has.
    func stopTakingRequests() {
        stopTaking(streams.stopTaking())
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
            if close {
                flushNow()
                context?.close(promise: nil)
            }
        }
    }
}

extension Array {
    /// For an array read from a moving `head` index (a queue): drops the elements before `head`
    /// once they are all of it, or at least `atLeast` and more than half of it, and resets
    /// `head`; so the array stays bounded without an O(n) removal per element taken.
    mutating func dropConsumedFront(head: inout Int, atLeast: Int) {
        if head == count {
            removeAll(keepingCapacity: true)
            head = 0
        } else if head >= atLeast, head * 2 > count {
            removeFirst(head)
            head = 0
        }
    }
}
