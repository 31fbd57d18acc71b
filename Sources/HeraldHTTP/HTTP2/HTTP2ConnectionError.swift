/// Why an HTTP/2 connection could not be opened.
package struct HTTP2ConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Reason: Sendable, Equatable {
        case http2NotOffered(String?)
        case timedOut
        case closed
        case shutDown
    }

    let reason: Reason

    init(_ reason: Reason) {
        self.reason = reason
    }

    /// The server's TLS handshake did not choose h2 (ALPN): it speaks HTTP/1.1 only.
    package var isHTTP2NotOffered: Bool {
        if case .http2NotOffered = reason { true } else { false }
    }

    package var description: String {
        switch reason {
        case .http2NotOffered(let chosen?): "the server chose \(chosen), not h2"
        case .http2NotOffered(nil): "the server does not offer h2 (ALPN)"
        case .timedOut: "the connection was not ready in time"
        case .closed: "the connection closed before it was ready"
        case .shutDown: "the client is shut down"
        }
    }
}
