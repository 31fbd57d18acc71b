import NIOCore

/// Passes writes straight on and turns the flushes of one event-loop tick into one, issued once
/// the loop has run what is queued on it.
///
/// It sits between TLS and HTTP/2 on a provider connection, so that `HTTP2ConnectionHandler` can
/// flush after every request. swift-nio-http2 hands out a flush's DATA frames in the order of a
/// set of stream ids, not the streams' order: with hundreds of requests per flush, answers came
/// back out of order and each closed stream was taken from the middle of swift-nio-http2's
/// stream maps, a cost that grows with the streams open (about a fifth of Herald's sending
/// thread, and a smaller share of the mock's). Flushing per request keeps the order; this
/// handler keeps the TLS records and the system calls at one per tick.
final class FlushCoalescingHandler: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var flushPending = false

    func flush(context: ChannelHandlerContext) {
        guard !flushPending else { return }
        flushPending = true
        context.eventLoop.assumeIsolated().execute {
            self.flushNow(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // A close that did not come through here (a reset, an error below): the flush still
        // queued must not touch a context that is gone.
        flushPending = false
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // What was written before the close still goes out (a GOAWAY, an RST_STREAM).
        flushNow(context: context)
        context.close(mode: mode, promise: promise)
    }

    private func flushNow(context: ChannelHandlerContext) {
        guard flushPending else { return }
        flushPending = false
        context.flush()
    }
}
