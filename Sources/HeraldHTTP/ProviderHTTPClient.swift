import AsyncHTTPClient
import HeraldCore
import NIOCore
import NIOSSL

/// The async-http-client setup the request-per-notification providers share (FCM, Web Push,
/// WNS): TLS trusting the system's roots and an optional extra CA, an optional outbound proxy,
/// bounded connect and read times, no redirects.
package enum ProviderHTTPClient {
    /// A client for one provider; shut it down after its last request.
    ///
    /// - Parameters:
    ///   - extraTrustedCAPEM: a CA to trust besides the system's (a test endpoint or a TLS proxy).
    ///   - proxy: an HTTP CONNECT or SOCKS5 proxy to go through.
    ///   - applicationProtocols: ALPN, in preference order.
    package static func make(
        extraTrustedCAPEM: String?, proxy: OutboundProxy?, connectTimeout: TimeAmount,
        applicationProtocols: [String] = ["h2", "http/1.1"]
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = applicationProtocols
        if let extraTrustedCAPEM {
            let extra = try NIOSSLCertificate.fromPEMBytes(Array(extraTrustedCAPEM.utf8))
            tls.additionalTrustRoots = [.certificates(extra)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = applicationProtocols.contains("h2") ? .automatic : .http1Only
        configuration.timeout = .init(connect: connectTimeout, read: .seconds(30))
        configuration.redirectConfiguration = .disallow
        configuration.proxy = proxy.map(Self.proxy)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// async-http-client's form of a proxy setting.
    package static func proxy(_ proxy: OutboundProxy) -> HTTPClient.Configuration.Proxy {
        switch proxy.kind {
        case .httpConnect:
            let authorization = proxy.username.map { HTTPClient.Authorization.basic(username: $0, password: proxy.password ?? "") }
            return .server(host: proxy.host, port: proxy.port, authorization: authorization)
        case .socks5:
            return .socksServer(host: proxy.host, port: proxy.port)
        }
    }
}
