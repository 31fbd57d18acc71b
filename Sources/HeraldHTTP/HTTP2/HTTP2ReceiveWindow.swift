import NIOHTTP2

/// The connection-level receive window of an HTTP/2 endpoint that reads frames without
/// swift-nio-http2's stream multiplexer, which would otherwise grant it: Herald's provider
/// connections (`HTTP2ConnectionHandler`, which frames HTTP/2 itself) and the mock APNs'
/// connections.
///
/// The window opens to `size` at the start (HTTP/2 starts every connection at 65,535 bytes) and
/// is topped up once a quarter of it has been used.
package struct HTTP2ReceiveWindow: Sendable {
    /// The window kept open for the peer's DATA.
    package static let size = 1 << 24

    /// The WINDOW_UPDATE that widens a new connection's window from HTTP/2's default to `size`.
    package static let opening = HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: size - 65_535))

    private var unacknowledged = 0

    package init() {}

    /// Counts a DATA frame against the window (its padding and pad-length byte count too,
    /// RFC 9113 §6.1); returns the WINDOW_UPDATE to send when one is due.
    package mutating func received(_ data: HTTP2Frame.FramePayload.Data) -> HTTP2Frame? {
        received(bytes: data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0))
            .map { HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: $0)) }
    }

    /// Counts `bytes` of DATA (payload, padding and pad-length byte) against the window; returns
    /// the increment of the WINDOW_UPDATE to send when one is due.
    package mutating func received(bytes: Int) -> Int? {
        unacknowledged += bytes
        guard unacknowledged >= Self.size / 4 else { return nil }
        defer { unacknowledged = 0 }
        return unacknowledged
    }
}
