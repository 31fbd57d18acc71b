import NIOCore
import NIOHPACK

/// One request for an `HTTP2ConnectionPool`: every header, pseudo-headers (`:method`,
/// `:scheme`, `:authority`, `:path`) first, and the body.
public struct HTTP2Request: Sendable {
    public var headers: HPACKHeaders
    public var body: ByteBuffer

    public init(headers: HPACKHeaders, body: ByteBuffer) {
        self.headers = headers
        self.body = body
    }
}

/// What became of one request.
public enum HTTP2Response: Sendable {
    /// An HTTP answer: its status, headers and body (nil when empty).
    case answered(status: Int, headers: HPACKHeaders, body: ByteBuffer?)
    /// Never reached the server (queued when the connection closed, refused, above a GOAWAY):
    /// safe to send again.
    case notSent
    /// May or may not have reached the server.
    case failed(String)
}
