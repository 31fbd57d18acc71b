/// The numbers of HTTP/2's wire format (RFC 9113 §4–§7) that Herald's client framing layer
/// (`HTTP2FrameEncoder`, `HTTP2FrameDecoder`, `HTTP2ConnectionHandler`) reads and writes.
///
/// Why the provider path frames HTTP/2 itself instead of running swift-nio-http2's
/// `NIOHTTP2Handler` (docs/decisions/0001-own-http2-client.md): the general-purpose handler (its
/// per-stream state machines, stream maps, frame enums, promises) cost an APNs-shaped request
/// several times the instructions of framing the same bytes directly, and a client that only
/// opens streams, sends one request on each and reads one answer needs a small part of it.
/// Request header blocks are compressed with NIOHPACK's encoder; answers are decoded by
/// Herald's own `HPACKBlockDecoder`.
enum HTTP2Wire {
    /// What a client sends first on every connection (RFC 9113 §3.4), before its SETTINGS.
    static let preface: StaticString = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    /// Every frame begins with these many bytes: length (24 bits), type, flags, stream id.
    static let frameHeaderSize = 9
    /// SETTINGS_MAX_FRAME_SIZE's initial value, and the least a peer may set.
    static let defaultMaxFrameSize = 16_384
    /// The largest SETTINGS_MAX_FRAME_SIZE a peer may set.
    static let largestMaxFrameSize = (1 << 24) - 1
    /// SETTINGS_HEADER_TABLE_SIZE's initial value: the HPACK dynamic table a peer may use.
    static let defaultHeaderTableSize = 4_096
    /// Every flow-control window starts here (RFC 9113 §6.9.2).
    static let defaultWindowSize = 65_535
    /// No flow-control window may exceed this.
    static let largestWindowSize = Int(Int32.max)

    enum FrameType: UInt8 {
        case data = 0x0
        case headers = 0x1
        case priority = 0x2
        case rstStream = 0x3
        case settings = 0x4
        case pushPromise = 0x5
        case ping = 0x6
        case goAway = 0x7
        case windowUpdate = 0x8
        case continuation = 0x9
    }

    enum Flag {
        static let endStream: UInt8 = 0x1
        static let ack: UInt8 = 0x1
        static let endHeaders: UInt8 = 0x4
        static let padded: UInt8 = 0x8
        static let priority: UInt8 = 0x20
    }

    enum Setting {
        static let headerTableSize: UInt16 = 0x1
        static let enablePush: UInt16 = 0x2
        static let maxConcurrentStreams: UInt16 = 0x3
        static let initialWindowSize: UInt16 = 0x4
        static let maxFrameSize: UInt16 = 0x5
        static let maxHeaderListSize: UInt16 = 0x6
    }

    /// RFC 9113 §7's error codes, as RST_STREAM and GOAWAY carry them.
    enum ErrorCode {
        static let noError: UInt32 = 0x0
        static let protocolError: UInt32 = 0x1
        static let internalError: UInt32 = 0x2
        static let flowControlError: UInt32 = 0x3
        static let frameSizeError: UInt32 = 0x6
        static let refusedStream: UInt32 = 0x7
        static let cancel: UInt32 = 0x8
        static let compressionError: UInt32 = 0x9

        /// The code's name, for messages.
        static func name(_ code: UInt32) -> String {
            let names = [
                "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
                "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
                "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
            ]
            return code < names.count ? names[Int(code)] : "error 0x\(String(code, radix: 16))"
        }
    }
}

/// A breach of HTTP/2 by the server that ends the connection (RFC 9113 §5.4.1): the client
/// sends GOAWAY with `code` and closes.
struct HTTP2ProtocolError: Error, Equatable, CustomStringConvertible {
    /// The RFC 9113 §7 error code for the GOAWAY.
    let code: UInt32
    let reason: String

    init(_ code: UInt32, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    var description: String { "HTTP/2 \(HTTP2Wire.ErrorCode.name(code)): \(reason)" }
}
