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
                    NIOHTTP1ProxyConnectHandler(
                        targetHost: host, targetPort: port, headers: headers, deadline: deadline, promise: established))
                return established.futureResult.flatMap {
                    let sync = channel.pipeline.syncOperations
                    return sync.removeHandler(decoder).flatMap { channel.pipeline.syncOperations.removeHandler(encoder) }
                }
            case .socks5:
                let socks = SOCKSClientHandler(targetAddress: .domain(host, port: port))
                try sync.addHandlers(
                    socks,
                    ReadinessHandler(promise: established, deadline: deadline) { event in
                        event is SOCKSProxyEstablishedEvent ? .success(()) : nil
                    })
                return established.futureResult.flatMap { channel.pipeline.syncOperations.removeHandler(socks) }
            }
        } catch {
            established.fail(error)
            return established.futureResult
        }
    }
}
