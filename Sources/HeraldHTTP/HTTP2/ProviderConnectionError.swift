import Foundation
import HeraldCore
import NIOCore
import NIOExtras
import NIOPosix
import NIOSOCKS
import NIOSSL

/// Why a connection to a provider could not be opened, sorted by cause: the server's
/// certificate not trusted, another TLS failure, a name that does not resolve, a refused or
/// timed-out connection, the outbound proxy, a server without h2, or `unknown` with the error's
/// own text. Its description says which, and where to look, so that the operator sees the cause
/// in the push's status, the activity log and the platform's status rather than a bare
/// `failedToLoadCertificate`.
package struct ProviderConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Base: Sendable, Hashable {
        case untrusted(String)
        case tls(String)
        case nameNotResolved
        case refused
        case timedOut
        case proxy(String)
        case http2NotOffered(String)
        case unknown(String)
    }

    private let base: Base
    /// The server, `host:port`.
    package let server: String

    /// Sorts the error a connection attempt to `host:port` (through `proxy`, if any) ended with.
    package init(_ error: any Error, host: String, port: Int, proxy: OutboundProxy?) {
        self.base = Self.classify(error, proxy: proxy)
        self.server = "\(host):\(port)"
    }

    private static func classify(_ error: any Error, proxy: OutboundProxy?) -> Base {
        let text = "\(error)"
        switch error {
        case let error as NIOSSLError:
            // BoringSSL's CERTIFICATE_VERIFY_FAILED: the chain does not end at a trusted root.
            if case .handshakeFailed = error, text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
                return .untrusted(text)
            }
            return .tls(text)
        case let error as NIOSSLExtraError:
            return error == .failedToValidateHostname ? .untrusted("the certificate does not name the server (\(text))") : .tls(text)
        case let error as HTTP2ConnectionError:
            if error.isHTTP2NotOffered { return .http2NotOffered(text) }
            if case .timedOut = error.reason { return .timedOut }
            return .unknown(text)
        case is NIOHTTP1ProxyConnectHandler.Error, is SOCKSError.InvalidReservedByte, is SOCKSError.InvalidProtocolVersion,
            is SOCKSError.InvalidServerState, is SOCKSError.InvalidAuthenticationSelection, is SOCKSError.ConnectionFailed:
            return .proxy(text)
        case let error as NIOConnectionError:
            if let proxy { return .proxy("cannot connect to the proxy \(proxy.host):\(proxy.port): \(text)") }
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil { return .nameNotResolved }
            if error.connectionErrors.contains(where: { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }) { return .refused }
            if error.connectionErrors.contains(where: { $0.error is ChannelError && "\($0.error)".contains("connectTimeout") }) {
                return .timedOut
            }
            return .unknown(text)
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            return proxy.map { .proxy("the proxy \($0.host):\($0.port) refused the connection") } ?? .refused
        case let error as ChannelError:
            guard case .connectTimeout = error else { return .unknown(text) }
            return proxy.map { .proxy("the proxy \($0.host):\($0.port) did not accept the connection in time") } ?? .timedOut
        default:
            if error is NIOConnectionError { return .unknown(text) }
            return text.contains("NXDOMAIN") || text.contains("Name or service not known") ? .nameNotResolved : .unknown(text)
        }
    }

    /// A short name for the cause, for metrics and status fields: `tls_untrusted`, `tls`,
    /// `dns`, `refused`, `timeout`, `proxy`, `no_h2`, `unknown`.
    package var cause: String {
        switch base {
        case .untrusted: "tls_untrusted"
        case .tls: "tls"
        case .nameNotResolved: "dns"
        case .refused: "refused"
        case .timedOut: "timeout"
        case .proxy: "proxy"
        case .http2NotOffered: "no_h2"
        case .unknown: "unknown"
        }
    }

    package var description: String {
        switch base {
        case .untrusted(let detail):
            "cannot reach \(server): TLS: its certificate is not trusted by the system's roots nor the extra CA "
                + "(HERALD_EXTRA_CA_FILE, the platform's extra_ca_pem) (\(detail))"
        case .tls(let detail):
            "cannot reach \(server): TLS failed (\(detail))"
        case .nameNotResolved:
            "cannot reach \(server): the host name does not resolve (DNS)"
        case .refused:
            "cannot reach \(server): the connection was refused"
        case .timedOut:
            "cannot reach \(server): no connection in time"
        case .proxy(let detail):
            "cannot reach \(server) through the proxy (HERALD_PROXY): \(detail)"
        case .http2NotOffered(let detail):
            "cannot reach \(server) over HTTP/2: \(detail)"
        case .unknown(let detail):
            "cannot reach \(server): \(detail)"
        }
    }
}
