import Hummingbird
import NIOCore

/// The request context of Herald's router: Hummingbird's basic context plus the client's
/// address, which the dashboard's sign-in rate limit is keyed on.
package struct HeraldRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The peer of the connection (nil when the router is driven without a socket, in tests).
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
