import NIOCore

/// A frame from the server, as `HTTP2FrameDecoder` hands it on: header blocks already joined
/// (HEADERS + CONTINUATION) and decoded (`HPACKBlockDecoder`), padding and priority fields dropped.
enum HTTP2InboundFrame: Equatable {
    case headers(streamID: Int32, head: HTTP2AnswerHead, endStream: Bool)
    /// `flowControlled`: the bytes the frame takes from the receive windows (its whole payload,
    /// padding included, RFC 9113 §6.1).
    case data(streamID: Int32, data: ByteBuffer, endStream: Bool, flowControlled: Int)
    case rstStream(streamID: Int32, errorCode: UInt32)
    case settings([(UInt16, UInt32)])
    case settingsAck
    case ping(UInt64, ack: Bool)
    case goAway(lastStreamID: Int32, errorCode: UInt32)
    case windowUpdate(streamID: Int32, increment: Int)
    /// PRIORITY, and frame types this client does not know (RFC 9113 §5.5 says to ignore them).
    case ignored

    static func == (lhs: HTTP2InboundFrame, rhs: HTTP2InboundFrame) -> Bool {
        switch (lhs, rhs) {
        case (.headers(let a, let b, let c), .headers(let x, let y, let z)): a == x && b == y && c == z
        case (.data(let a, let b, let c, let d), .data(let w, let x, let y, let z)): a == w && b == x && c == y && d == z
        case (.rstStream(let a, let b), .rstStream(let x, let y)): a == x && b == y
        case (.settings(let a), .settings(let x)): a.elementsEqual(x) { $0 == $1 }
        case (.settingsAck, .settingsAck), (.ignored, .ignored): true
        case (.ping(let a, let b), .ping(let x, let y)): a == x && b == y
        case (.goAway(let a, let b), .goAway(let x, let y)): a == x && b == y
        case (.windowUpdate(let a, let b), .windowUpdate(let x, let y)): a == x && b == y
        default: false
        }
    }
}

/// Cuts the bytes a server sends into frames and checks each against RFC 9113's framing rules;
/// a breach throws `HTTP2ProtocolError`, which ends the connection.
///
/// Bytes arrive with `append`; `nextFrame()` returns each whole frame, nil while the next is
/// incomplete. Every header block is decoded here, whatever stream it is for, so that the HPACK
/// dynamic table stays in step with the server's.
struct HTTP2FrameDecoder {
    private var buffer: ByteBuffer?
    private var hpack: HPACKBlockDecoder
    /// The largest frame payload accepted: this client announces no SETTINGS_MAX_FRAME_SIZE, so
    /// the default.
    private let maxFrameSize = HTTP2Wire.defaultMaxFrameSize
    /// The most bytes a header block may take across its CONTINUATION frames.
    private let maxHeaderBlockSize: Int
    /// A header block that awaits its CONTINUATION frames: its stream, END_STREAM, the bytes so far.
    private var openBlock: (streamID: Int32, endStream: Bool, fragment: ByteBuffer)?
    /// Whether the server's preface (a SETTINGS frame first) has been seen.
    private var sawPreface = false

    /// - Parameters:
    ///   - maxHeaderListSize: the SETTINGS_MAX_HEADER_LIST_SIZE this client announced.
    ///   - keptFields: the fields of each header block handed on.
    init(maxHeaderListSize: Int = 1 << 16, keptFields: HTTP2AnswerFields = .all) {
        // This client announces no SETTINGS_HEADER_TABLE_SIZE: the server's encoder may use 4,096.
        hpack = HPACKBlockDecoder(
            tableCapacity: HTTP2Wire.defaultHeaderTableSize, maxHeaderListSize: maxHeaderListSize, keptFields: keptFields)
        maxHeaderBlockSize = maxHeaderListSize
    }

    mutating func append(_ bytes: ByteBuffer) {
        if buffer == nil || buffer!.readableBytes == 0 {
            buffer = bytes
        } else {
            var bytes = bytes
            buffer!.writeBuffer(&bytes)
        }
    }

    /// The next whole frame, nil until more bytes arrive.
    mutating func nextFrame() throws(HTTP2ProtocolError) -> HTTP2InboundFrame? {
        while true {
            guard var bytes = buffer, bytes.readableBytes >= HTTP2Wire.frameHeaderSize else { return nil }
            let start = bytes.readerIndex
            let length = Int(bytes.getInteger(at: start, as: UInt16.self)!) << 8 | Int(bytes.getInteger(at: start + 2, as: UInt8.self)!)
            guard length <= maxFrameSize else {
                throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.frameSizeError, "a frame of \(length) bytes, above \(maxFrameSize)")
            }
            guard bytes.readableBytes >= HTTP2Wire.frameHeaderSize + length else { return nil }
            let type = bytes.getInteger(at: start + 3, as: UInt8.self)!
            let flags = bytes.getInteger(at: start + 4, as: UInt8.self)!
            let streamID = Int32(bitPattern: bytes.getInteger(at: start + 5, as: UInt32.self)! & 0x7FFF_FFFF)
            bytes.moveReaderIndex(forwardBy: HTTP2Wire.frameHeaderSize)
            let payload = bytes.readSlice(length: length)!
            buffer = bytes.readableBytes == 0 ? nil : bytes
            if let frame = try frame(type: type, flags: flags, streamID: streamID, payload: payload) { return frame }
        }
    }

    // MARK: Frames

    /// The frame, or nil for one that is part of a header block still open.
    private mutating func frame(type rawType: UInt8, flags: UInt8, streamID: Int32, payload: ByteBuffer) throws(HTTP2ProtocolError)
        -> HTTP2InboundFrame?
    {
        let type = HTTP2Wire.FrameType(rawValue: rawType)
        if let block = openBlock, type != .continuation || streamID != block.streamID {
            throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "a header block was interrupted by another frame")
        }
        if !sawPreface {
            guard type == .settings, flags & HTTP2Wire.Flag.ack == 0 else {
                throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "the server's first frame is not SETTINGS")
            }
            sawPreface = true
        }
        guard let type else { return .ignored }
        var payload = payload
        switch type {
        case .data:
            try requireStream(streamID, type)
            let flowControlled = payload.readableBytes
            try removePadding(&payload, flags: flags)
            return .data(
                streamID: streamID, data: payload, endStream: flags & HTTP2Wire.Flag.endStream != 0, flowControlled: flowControlled)
        case .headers:
            try requireStream(streamID, type)
            guard streamID % 2 == 1 else {
                throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "HEADERS on server-initiated stream \(streamID)")
            }
            try removePadding(&payload, flags: flags)
            if flags & HTTP2Wire.Flag.priority != 0 {
                guard payload.readableBytes >= 5 else {
                    throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.frameSizeError, "HEADERS too short for its priority fields")
                }
                payload.moveReaderIndex(forwardBy: 5)
            }
            let endStream = flags & HTTP2Wire.Flag.endStream != 0
            guard flags & HTTP2Wire.Flag.endHeaders != 0 else {
                openBlock = (streamID, endStream, payload)
                try checkBlockSize(payload.readableBytes)
                return nil
            }
            return .headers(streamID: streamID, head: try hpack.decode(payload), endStream: endStream)
        case .continuation:
            guard var block = openBlock else {
                throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "CONTINUATION without a header block")
            }
            block.fragment.writeBuffer(&payload)
            try checkBlockSize(block.fragment.readableBytes)
            guard flags & HTTP2Wire.Flag.endHeaders != 0 else {
                openBlock = block
                return nil
            }
            openBlock = nil
            return .headers(streamID: block.streamID, head: try hpack.decode(block.fragment), endStream: block.endStream)
        case .priority:
            try requireStream(streamID, type)
            try requireLength(payload, 5, type)
            return .ignored
        case .rstStream:
            try requireStream(streamID, type)
            try requireLength(payload, 4, type)
            return .rstStream(streamID: streamID, errorCode: payload.readInteger(as: UInt32.self)!)
        case .settings:
            try requireConnection(streamID, type)
            if flags & HTTP2Wire.Flag.ack != 0 {
                try requireLength(payload, 0, type)
                return .settingsAck
            }
            guard payload.readableBytes % 6 == 0 else {
                throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.frameSizeError, "SETTINGS of \(payload.readableBytes) bytes")
            }
            var settings: [(UInt16, UInt32)] = []
            while let identifier = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
                try check(setting: identifier, value)
                settings.append((identifier, value))
            }
            return .settings(settings)
        case .pushPromise:
            // This client's SETTINGS_ENABLE_PUSH is 0 (RFC 9113 §6.6).
            throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "PUSH_PROMISE with push disabled")
        case .ping:
            try requireConnection(streamID, type)
            try requireLength(payload, 8, type)
            return .ping(payload.readInteger(as: UInt64.self)!, ack: flags & HTTP2Wire.Flag.ack != 0)
        case .goAway:
            try requireConnection(streamID, type)
            guard payload.readableBytes >= 8 else {
                throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.frameSizeError, "GOAWAY of \(payload.readableBytes) bytes")
            }
            let last = Int32(bitPattern: payload.readInteger(as: UInt32.self)! & 0x7FFF_FFFF)
            return .goAway(lastStreamID: last, errorCode: payload.readInteger(as: UInt32.self)!)
        case .windowUpdate:
            try requireLength(payload, 4, type)
            let increment = Int(payload.readInteger(as: UInt32.self)! & 0x7FFF_FFFF)
            // A zero increment on a stream is a stream error (RFC 9113 §6.9); this client, which
            // sends at most a few KiB per stream, treats it as the server's breach all the same.
            guard increment > 0 else {
                throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "WINDOW_UPDATE of 0 on stream \(streamID)")
            }
            return .windowUpdate(streamID: streamID, increment: increment)
        }
    }

    private func checkBlockSize(_ size: Int) throws(HTTP2ProtocolError) {
        guard size <= maxHeaderBlockSize else {
            throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "a header block above \(maxHeaderBlockSize) bytes")
        }
    }

    /// Drops the pad-length byte and the padding of a PADDED frame (RFC 9113 §6.1, §6.2).
    private func removePadding(_ payload: inout ByteBuffer, flags: UInt8) throws(HTTP2ProtocolError) {
        guard flags & HTTP2Wire.Flag.padded != 0 else { return }
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else {
            throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "padding longer than its frame")
        }
        payload.moveWriterIndex(to: payload.writerIndex - Int(padding))
    }

    private func check(setting identifier: UInt16, _ value: UInt32) throws(HTTP2ProtocolError) {
        switch identifier {
        case HTTP2Wire.Setting.enablePush where value > 1:
            throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "SETTINGS_ENABLE_PUSH of \(value)")
        case HTTP2Wire.Setting.initialWindowSize where Int(value) > HTTP2Wire.largestWindowSize:
            throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE of \(value)")
        case HTTP2Wire.Setting.maxFrameSize
        where Int(value) < HTTP2Wire.defaultMaxFrameSize || Int(value) > HTTP2Wire.largestMaxFrameSize:
            throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "SETTINGS_MAX_FRAME_SIZE of \(value)")
        default:
            return
        }
    }

    private func requireStream(_ streamID: Int32, _ type: HTTP2Wire.FrameType) throws(HTTP2ProtocolError) {
        guard streamID != 0 else { throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "\(type) on stream 0") }
    }

    private func requireConnection(_ streamID: Int32, _ type: HTTP2Wire.FrameType) throws(HTTP2ProtocolError) {
        guard streamID == 0 else { throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.protocolError, "\(type) on stream \(streamID)") }
    }

    private func requireLength(_ payload: ByteBuffer, _ length: Int, _ type: HTTP2Wire.FrameType) throws(HTTP2ProtocolError) {
        guard payload.readableBytes == length else {
            throw HTTP2ProtocolError(HTTP2Wire.ErrorCode.frameSizeError, "\(type) of \(payload.readableBytes) bytes")
        }
    }
}
