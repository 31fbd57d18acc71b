import struct Foundation.URLComponents

/// A proxy that provider connections go through: HTTP `CONNECT` or SOCKS5. TLS to the
/// provider is end to end, inside the tunnel.
package struct OutboundProxy: Sendable, Equatable {
    /// How the tunnel is asked for.
    package enum Kind: String, Sendable, Equatable {
        /// An HTTP proxy, asked with `CONNECT host:port`.
        case httpConnect = "http"
        /// A SOCKS5 proxy (RFC 1928), without authentication.
        case socks5
    }

    /// CONNECT or SOCKS5.
    package var kind: Kind
    /// The proxy's address.
    package var host: String
    package var port: Int
    /// Basic credentials for an HTTP proxy (`Proxy-Authorization`).
    package var username: String?
    package var password: String?

    package init(kind: Kind, host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// Parses a proxy URL, as `HERALD_PROXY` gives it: `http://[user:password@]host[:port]`
    /// (port 8080 by default) or `socks5://host[:port]` (1080).
    package init(url: String, field: String = "HERALD_PROXY") throws(ValidationError) {
        guard let components = URLComponents(string: url.trimmingASCIIWhitespace()), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw ValidationError(message: "a proxy is http://[user:password@]host:port or socks5://host:port", field: field)
        }
        switch scheme {
        case "http":
            self.init(
                kind: .httpConnect, host: host, port: components.port ?? 8080, username: components.user?.removingPercentEncoding,
                password: components.password?.removingPercentEncoding)
        case "socks5", "socks5h", "socks":
            guard components.user == nil else {
                throw ValidationError(message: "SOCKS5 proxies are supported without authentication only", field: field)
            }
            self.init(kind: .socks5, host: host, port: components.port ?? 1080)
        default:
            throw ValidationError(message: "the proxy scheme '\(scheme)' is not http or socks5", field: field)
        }
        guard (1...65535).contains(port) else {
            throw ValidationError(message: "the proxy port must be from 1 to 65535", field: field)
        }
    }
}

extension OutboundProxy: RedactingDescription {
    /// The proxy's URL with its password redacted.
    package var description: String {
        let user = username.map { "\($0):\(secretPlaceholder(password))@" } ?? ""
        return "\(kind.rawValue)://\(user)\(host):\(port)"
    }
}
