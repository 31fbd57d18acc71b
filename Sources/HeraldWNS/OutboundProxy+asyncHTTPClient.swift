import AsyncHTTPClient
import HeraldCore

extension OutboundProxy {
    /// The proxy as async-http-client takes it: CONNECT with optional Basic credentials, or SOCKS5.
    var asyncHTTPClientProxy: HTTPClient.Configuration.Proxy {
        switch kind {
        case .httpConnect:
            let authorization = username.map { HTTPClient.Authorization.basic(username: $0, password: password ?? "") }
            return .server(host: host, port: port, authorization: authorization)
        case .socks5:
            return .socksServer(host: host, port: port)
        }
    }
}
