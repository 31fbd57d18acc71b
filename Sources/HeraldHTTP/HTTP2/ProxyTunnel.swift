import Foundation
import HeraldCore
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOSOCKS

/// Opens a tunnel through an outbound proxy on a connected channel: an HTTP `CONNECT`
/// (swift-nio-extras' `NIOHTTP1ProxyConnectHandler`) or a SOCKS5 handshake (NIOSOCKS). Once the
/// future succeeds the proxy's handlers are gone and the channel carries bytes to the target,
/// ready for TLS.
enum ProxyTunnel {
    /// Asks `proxy` for a tunnel to `host:port`; fails at `deadline`. Call on the channel's loop.
    static func open(
        on channel: any Channel, through proxy: OutboundProxy, to host: String, port: Int, deadline: NIODeadline
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.assertInEventLoop()
        let sync = channel.pipeline.syncOperations
        let established = channel.eventLoop.makePromise(of: Void.self)
        do {
            switch proxy.kind {
            case .httpConnect:
                var headers = HTTPHeaders()
                if let username = proxy.username {
                    let credentials = Data("\(username):\(proxy.password ?? "")".utf8).base64EncodedString()
                    headers.add(name: "proxy-authorization", value: "Basic \(credentials)")
                }
                let encoder = HTTPRequestEncoder()
                let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes))
                // The handler sends CONNECT when added to an active channel and removes itself
                // once the proxy answered 2xx.
                try sync.addHandlers(
                    encoder, decoder,
                    NIOHTTP1ProxyConnectHandler(targetHost: host, targetPort: port, headers: headers, deadline: deadline, promise: established))
                return established.futureResult.flatMap {
                    let sync = channel.pipeline.syncOperations
                    return sync.removeHandler(decoder).flatMap { channel.pipeline.syncOperations.removeHandler(encoder) }
                }
            case .socks5:
                let socks = SOCKSClientHandler(targetAddress: .domain(host, port: port))
                try sync.addHandlers(socks, SOCKSTunnelWaiter(promise: established, deadline: deadline))
                return established.futureResult.flatMap { channel.pipeline.syncOperations.removeHandler(socks) }
            }
        } catch {
            established.fail(error)
            return established.futureResult
        }
    }
}

/// Completes a promise when the SOCKS handshake is done (then leaves the pipeline), or fails it
/// on an error, a closed channel or the deadline.
private final class SOCKSTunnelWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<Void>
    private let deadline: NIODeadline
    private var timeout: Scheduled<Void>?

    init(promise: EventLoopPromise<Void>, deadline: NIODeadline) {
        self.promise = promise
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let promise = self.promise
        let channel = context.channel
        timeout = context.eventLoop.scheduleTask(deadline: deadline) {
            promise.fail(ChannelError.connectTimeout(.zero))
            channel.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is SOCKSProxyEstablishedEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        timeout?.cancel()
        promise.succeed(())
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        timeout?.cancel()
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timeout?.cancel()
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }
}
