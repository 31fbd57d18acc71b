import NIOCore

/// Waits for the inbound user event that says a connection is ready (a proxy tunnel is up, TLS
/// agreed on h2): `verdict` reads each event, and the first verdict completes the promise. An
/// error, a closed channel or the deadline fail it. On success the handler leaves the pipeline;
/// on failure it closes the channel.
final class ReadinessHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<Void>
    private let deadline: NIODeadline
    private let verdict: (Any) -> Result<Void, any Error>?
    private var timeout: Scheduled<Void>?

    init(promise: EventLoopPromise<Void>, deadline: NIODeadline, verdict: @escaping (Any) -> Result<Void, any Error>?) {
        self.promise = promise
        self.deadline = deadline
        self.verdict = verdict
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let promise = self.promise
        let channel = context.channel
        timeout = context.eventLoop.scheduleTask(deadline: deadline) {
            promise.fail(HTTP2ConnectionError(.timedOut))
            channel.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        let result = verdict(event)
        context.fireUserInboundEventTriggered(event)
        switch result {
        case .success?:
            timeout?.cancel()
            promise.succeed(())
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        case .failure(let error)?:
            timeout?.cancel()
            promise.fail(error)
            context.close(promise: nil)
        case nil:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        timeout?.cancel()
        promise.fail(error)
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timeout?.cancel()
        promise.fail(HTTP2ConnectionError(.closed))
        context.fireChannelInactive()
    }
}
