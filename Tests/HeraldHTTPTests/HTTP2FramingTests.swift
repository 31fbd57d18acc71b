import Foundation
import NIOCore
import NIOHPACK
import Testing

@testable import HeraldHTTP

/// The client framing layer's encoder and decoder: what one writes the other reads back, the
/// inbound extras (padding, priority) are dropped, and every breach of RFC 9113's framing rules
/// is a connection error with the right code.
@Suite struct HTTP2FramingTests {
    /// Frames as the decoder reads them from `bytes`, after a leading empty SETTINGS (a server's
    /// preface must come first).
    private func decode(_ bytes: ByteBuffer, split: Int? = nil) throws(HTTP2ProtocolError) -> [HTTP2InboundFrame] {
        var decoder = HTTP2FrameDecoder()
        var preface = ByteBuffer()
        HTTP2FrameEncoder.writeSettings([], into: &preface)
        decoder.append(preface)
        var frames: [HTTP2InboundFrame] = []
        var bytes = bytes
        // Fed in pieces when asked, to show frames may straddle reads.
        while bytes.readableBytes > 0 {
            decoder.append(bytes.readSlice(length: min(split ?? bytes.readableBytes, bytes.readableBytes))!)
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        }
        return Array(frames.dropFirst())
    }

    private func frame(type: UInt8, flags: UInt8 = 0, streamID: Int32, payload: [UInt8]) -> ByteBuffer {
        var bytes = ByteBuffer()
        HTTP2FrameEncoder.writeFrameHeader(
            length: payload.count, type: HTTP2Wire.FrameType(rawValue: type) ?? .data, flags: flags, streamID: streamID, into: &bytes)
        if HTTP2Wire.FrameType(rawValue: type) == nil { bytes.setInteger(type, at: 3) }
        bytes.writeBytes(payload)
        return bytes
    }

    private func error(_ bytes: ByteBuffer) -> UInt32? {
        do {
            _ = try decode(bytes)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func everyFrameTheEncoderWritesTheDecoderReadsBack() throws {
        var encoder = HTTP2FrameEncoder()
        var bytes = ByteBuffer()
        let headers: HPACKHeaders = [":method": "POST", ":path": "/3/device/abc", "apns-topic": "com.example"]
        HTTP2FrameEncoder.writeSettings([(0x3, 100), (0x4, 1 << 20)], into: &bytes)
        HTTP2FrameEncoder.writeSettingsAck(into: &bytes)
        HTTP2FrameEncoder.writePing(42, ack: false, into: &bytes)
        HTTP2FrameEncoder.writePing(43, ack: true, into: &bytes)
        HTTP2FrameEncoder.writeWindowUpdate(streamID: 0, increment: 1000, into: &bytes)
        HTTP2FrameEncoder.writeWindowUpdate(streamID: 5, increment: 7, into: &bytes)
        try encoder.writeHeaders(headers, streamID: 1, endStream: false, into: &bytes)
        HTTP2FrameEncoder.writeData(ByteBuffer(string: "{}"), streamID: 1, endStream: true, into: &bytes)
        try encoder.writeHeaders(headers, streamID: 3, endStream: true, into: &bytes)
        HTTP2FrameEncoder.writeRSTStream(streamID: 3, errorCode: 0x8, into: &bytes)
        HTTP2FrameEncoder.writeGoAway(lastStreamID: 3, errorCode: 0x1, into: &bytes)
        let expected: [HTTP2InboundFrame] = [
            .settings([(0x3, 100), (0x4, 1 << 20)]), .settingsAck, .ping(42, ack: false), .ping(43, ack: true),
            .windowUpdate(streamID: 0, increment: 1000), .windowUpdate(streamID: 5, increment: 7),
            .headers(streamID: 1, headers: headers, endStream: false),
            .data(streamID: 1, data: ByteBuffer(string: "{}"), endStream: true, flowControlled: 2),
            .headers(streamID: 3, headers: headers, endStream: true), .rstStream(streamID: 3, errorCode: 0x8),
            .goAway(lastStreamID: 3, errorCode: 0x1),
        ]
        #expect(try decode(bytes) == expected)
        // The same bytes a few at a time: frames straddle reads.
        #expect(try decode(bytes, split: 5) == expected)
    }

    @Test func aHeaderBlockAboveTheFrameSizeIsSplitAndJoined() throws {
        var encoder = HTTP2FrameEncoder()
        let headers: HPACKHeaders = [":status": "200", "x-long": String(repeating: "q", count: 30_000)]
        var bytes = ByteBuffer()
        try encoder.writeHeaders(headers, streamID: 7, endStream: true, into: &bytes)
        // HEADERS (END_STREAM, no END_HEADERS), then CONTINUATION … END_HEADERS.
        #expect(bytes.getInteger(at: 3, as: UInt8.self) == 0x1)
        #expect(bytes.getInteger(at: 4, as: UInt8.self) == 0x1)
        #expect(bytes.getInteger(at: 9 + 16_384 + 3, as: UInt8.self) == 0x9)
        #expect(try decode(bytes) == [.headers(streamID: 7, headers: headers, endStream: true)])
        // A server that allows larger frames gets one.
        encoder.maxFrameSize = 65_536
        var one = ByteBuffer()
        try encoder.writeHeaders(headers, streamID: 9, endStream: false, into: &one)
        #expect(one.getInteger(at: 4, as: UInt8.self) == 0x4)
    }

    @Test func paddingAndPriorityFieldsAreDropped() throws {
        var block = ByteBuffer()
        var hpack = HPACKEncoder(allocator: ByteBufferAllocator())
        try hpack.encode(headers: [":status": "200"], to: &block)
        // HEADERS, PADDED | PRIORITY | END_HEADERS: pad length 3, five priority bytes, block, padding.
        let headersPayload = [3] + [0x80, 0, 0, 1, 16] + Array(block.readableBytesView) + [0, 0, 0]
        var bytes = frame(type: 0x1, flags: 0x8 | 0x20 | 0x4, streamID: 1, payload: headersPayload)
        // DATA, PADDED | END_STREAM: pad length 2, "ok", padding.
        var data = frame(type: 0x0, flags: 0x8 | 0x1, streamID: 1, payload: [2, 0x6F, 0x6B, 0, 0])
        bytes.writeBuffer(&data)
        var priority = frame(type: 0x2, streamID: 1, payload: [0, 0, 0, 3, 16])
        bytes.writeBuffer(&priority)
        var unknown = frame(type: 0xBE, streamID: 0, payload: [1, 2, 3])
        bytes.writeBuffer(&unknown)
        #expect(
            try decode(bytes) == [
                .headers(streamID: 1, headers: [":status": "200"], endStream: false),
                .data(streamID: 1, data: ByteBuffer(string: "ok"), endStream: true, flowControlled: 5), .ignored, .ignored,
            ])
    }

    @Test func breachesOfTheFramingRulesAreConnectionErrors() throws {
        let protocolError = HTTP2Wire.ErrorCode.protocolError
        let frameSize = HTTP2Wire.ErrorCode.frameSizeError
        #expect(error(frame(type: 0x6, streamID: 0, payload: [1, 2, 3, 4, 5, 6, 7])) == frameSize, "PING of 7 bytes")
        #expect(error(frame(type: 0x4, streamID: 0, payload: [0, 3, 0, 0, 1])) == frameSize, "SETTINGS of 5 bytes")
        #expect(error(frame(type: 0x4, flags: 0x1, streamID: 0, payload: [0])) == frameSize, "SETTINGS ACK with a payload")
        #expect(error(frame(type: 0x3, streamID: 1, payload: [0, 0, 8])) == frameSize, "RST_STREAM of 3 bytes")
        #expect(error(frame(type: 0x0, streamID: 0, payload: [1])) == protocolError, "DATA on stream 0")
        #expect(error(frame(type: 0x4, streamID: 1, payload: [])) == protocolError, "SETTINGS on a stream")
        #expect(error(frame(type: 0x9, flags: 0x4, streamID: 1, payload: [0x88])) == protocolError, "CONTINUATION alone")
        #expect(error(frame(type: 0x5, flags: 0x4, streamID: 1, payload: [0, 0, 0, 2, 0x88])) == protocolError, "PUSH_PROMISE")
        #expect(error(frame(type: 0x8, streamID: 0, payload: [0, 0, 0, 0])) == protocolError, "WINDOW_UPDATE of 0")
        #expect(error(frame(type: 0x0, flags: 0x8, streamID: 1, payload: [5, 1, 2])) == protocolError, "padding beyond the frame")
        #expect(error(frame(type: 0x1, flags: 0x4, streamID: 2, payload: [0x88])) == protocolError, "HEADERS on an even stream")
        #expect(error(frame(type: 0x4, streamID: 0, payload: [0, 5, 0, 0, 0, 100])) == protocolError, "MAX_FRAME_SIZE of 100")
        #expect(
            error(frame(type: 0x4, streamID: 0, payload: [0, 4, 0x80, 0, 0, 0])) == HTTP2Wire.ErrorCode.flowControlError,
            "INITIAL_WINDOW_SIZE of 2^31")
        #expect(
            error(frame(type: 0x1, flags: 0x4, streamID: 1, payload: [0xFF, 0xFF, 0xFF, 0xFF])) == HTTP2Wire.ErrorCode.compressionError,
            "a header block HPACK cannot decode")
        // A header block interrupted by another frame.
        var interrupted = frame(type: 0x1, streamID: 1, payload: [0x88])
        var ping = frame(type: 0x6, streamID: 0, payload: [0, 0, 0, 0, 0, 0, 0, 0])
        interrupted.writeBuffer(&ping)
        #expect(error(interrupted) == protocolError)
        // A frame longer than the 16,384 bytes this client allows.
        #expect(error(frame(type: 0x0, streamID: 1, payload: Array(repeating: 0, count: 16_385))) == frameSize)
    }

    @Test func theServersFirstFrameMustBeSettings() {
        var decoder = HTTP2FrameDecoder()
        var ping = ByteBuffer()
        HTTP2FrameEncoder.writePing(1, ack: false, into: &ping)
        decoder.append(ping)
        #expect(throws: HTTP2ProtocolError.self) { try decoder.nextFrame() }
    }

    /// The fields a batch's blocks share are encoded once and their bytes reused while they are
    /// references alone; a block that inserts into the table in between, or a new table size,
    /// must not leave stale references behind: a server's decoder reads every block back whole.
    @Test func sharedFieldsAreReusedOnlyWhileTheTableStaysAsItWas() throws {
        var encoder = HTTP2FrameEncoder()
        var server = HPACKDecoder(allocator: ByteBufferAllocator())
        func request(_ token: Int, topic: String) -> HPACKHeaders {
            var headers = HPACKHeaders()
            headers.add(name: ":path", value: "/3/device/\(token)", indexing: .nonIndexable)
            for (name, value) in [
                (":method", "POST"), (":scheme", "https"), (":authority", "api.push.apple.com"), ("apns-topic", topic),
                ("apns-push-type", "alert"), ("apns-priority", "10"), ("content-length", "200"), ("authorization", "bearer x.y.z"),
            ] {
                headers.add(name: name, value: value)
            }
            return headers
        }
        var sizes: [Int] = []
        let topics = ["a", "a", "a", "a", "b", "b", "a", "a", "resize", "a", "a"]
        for (token, topic) in topics.enumerated() {
            if topic == "resize" {
                encoder.setHeaderTableSize(200)
                continue
            }
            let headers = request(token, topic: topic)
            sizes.append(try Self.roundTrip(headers, streamID: Int32(2 * token + 1), &encoder, &server, "block \(token), topic \(topic)"))
        }
        // Once in the table the shared fields cost a byte each: the later blocks are short.
        #expect(sizes[2] < sizes[0] / 2)
    }

    /// Encodes `headers` as one HEADERS frame, expects the server's decoder to read back the same
    /// fields in order, and returns the frame's size.
    private static func roundTrip(
        _ headers: HPACKHeaders, streamID: Int32, _ encoder: inout HTTP2FrameEncoder, _ server: inout HPACKDecoder, _ label: String
    ) throws -> Int {
        var bytes = ByteBuffer()
        try encoder.writeHeaders(headers, streamID: streamID, endStream: false, into: &bytes)
        let size = bytes.readableBytes
        bytes.moveReaderIndex(forwardBy: 9)
        let decoded = try server.decodeHeaders(from: &bytes)
        #expect(decoded.map { "\($0.name): \($0.value)" } == headers.map { "\($0.name): \($0.value)" }, Comment(rawValue: label))
        return size
    }

    /// APNs requests carry two fields that change per request, `:path` first and `apns-id` after
    /// the other pseudo-headers: the shared runs around them are reused, and each block still
    /// decodes whole, in order.
    @Test func sharedRunsAroundFieldsThatChangeAreReused() throws {
        var encoder = HTTP2FrameEncoder()
        var server = HPACKDecoder(allocator: ByteBufferAllocator())
        var sizes: [Int] = []
        for token in 0..<6 {
            var headers = HPACKHeaders()
            headers.add(name: ":path", value: "/3/device/\(token)", indexing: .nonIndexable)
            for (name, value) in [(":method", "POST"), (":scheme", "https"), (":authority", "api.push.apple.com")] {
                headers.add(name: name, value: value)
            }
            headers.add(name: "apns-id", value: UUID().uuidString.lowercased(), indexing: .nonIndexable)
            // The fourth block changes a shared field: inserted, so nothing kept survives it.
            for (name, value) in [("apns-topic", token == 3 ? "b" : "a"), ("apns-priority", "10"), ("authorization", "bearer x.y.z")] {
                headers.add(name: name, value: value)
            }
            sizes.append(try Self.roundTrip(headers, streamID: Int32(2 * token + 1), &encoder, &server, "block \(token)"))
        }
        // The shared fields went as literals once, then as a byte each.
        #expect(sizes[2] < sizes[0] - 40)
        #expect(sizes[5] == sizes[2])
    }

    /// A batch's requests as shared fields with a path suffix and an id (`HTTP2Request(shared:…)`,
    /// the APNs fan-out's form) give the same bytes as the same requests as header lists, block by
    /// block: across a change of batch (a new shared instance with the same fields, then one with
    /// a changed field, which inserts) and a change of the table's size, with a path whose length
    /// takes more than a byte; and the server's decoder reads each block back whole.
    @Test func sharedFieldsWithPerRequestValuesEncodeAsTheHeaderListWould() throws {
        func shared(topic: String, authority: String = "api.push.apple.com") -> HTTP2SharedHeaders {
            HTTP2SharedHeaders(
                pathPrefix: "/3/device/", pseudoHeaders: [":method": "POST", ":scheme": "https", ":authority": authority],
                idName: "apns-id", fields: ["apns-topic": topic, "apns-priority": "10", "authorization": "bearer x.y.z"])
        }
        let batches = [shared(topic: "a"), shared(topic: "a"), shared(topic: "b"), shared(topic: "b", authority: "h:1")]
        var lists = HTTP2FrameEncoder()
        var sharing = HTTP2FrameEncoder()
        var server = HPACKDecoder(allocator: ByteBufferAllocator())
        var streamID: Int32 = 1
        for (number, batch) in batches.enumerated() {
            if number == 3 {
                lists.setHeaderTableSize(300)
                sharing.setHeaderTableSize(300)
            }
            for index in 0..<4 {
                let request = HTTP2Request(
                    shared: batch, pathSuffix: String(repeating: "ab", count: index == 3 ? 100 : 32) + "\(index)", id: UUID(),
                    body: ByteBuffer())
                let list = request.headers
                #expect(
                    list.map(\.name) == [
                        ":path", ":method", ":scheme", ":authority", "apns-id", "apns-topic", "apns-priority", "authorization",
                    ])
                var expected = ByteBuffer()
                try lists.writeHeaders(list, streamID: streamID, endStream: false, into: &expected)
                var bytes = ByteBuffer()
                try sharing.writeHeaders(request.head, streamID: streamID, endStream: false, into: &bytes)
                #expect(bytes == expected, "batch \(number), request \(index)")
                bytes.moveReaderIndex(forwardBy: 9)
                let decoded = try server.decodeHeaders(from: &bytes)
                #expect(decoded.map { "\($0.name): \($0.value)" } == list.map { "\($0.name): \($0.value)" })
                streamID += 2
            }
        }
    }

    /// The unindexed fields Herald writes itself: long values (lengths past a one-byte prefix),
    /// never-indexed ones, and `:path` by its static index, read back by NIOHPACK's decoder.
    @Test func unindexedLiteralsDecode() throws {
        var encoder = HTTP2FrameEncoder()
        var server = HPACKDecoder(
            allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize, maxHeaderListSize: 1 << 20)
        for length in [0, 1, 126, 127, 128, 300, 20_000] {
            var headers = HPACKHeaders()
            headers.add(name: ":path", value: "/" + String(repeating: "p", count: length), indexing: .nonIndexable)
            headers.add(name: ":method", value: "POST")
            headers.add(name: "x-long", value: String(repeating: "v", count: length), indexing: .neverIndexed)
            headers.add(name: "apns-topic", value: "a")
            var bytes = ByteBuffer()
            try encoder.writeHeaders(headers, streamID: 1, endStream: false, into: &bytes)
            var block = ByteBuffer()
            var frames = bytes
            // Reassemble the block from HEADERS and any CONTINUATION frames.
            while frames.readableBytes > 0 {
                let size = Int(frames.readInteger(as: UInt16.self)!) << 8 | Int(frames.readInteger(as: UInt8.self)!)
                frames.moveReaderIndex(forwardBy: 6)
                var payload = frames.readSlice(length: size)!
                block.writeBuffer(&payload)
            }
            let decoded = try server.decodeHeaders(from: &block)
            #expect(decoded.map { "\($0.name): \($0.value)" } == headers.map { "\($0.name): \($0.value)" }, "length \(length)")
            #expect(decoded.map(\.indexable) == [.nonIndexable, .indexable, .neverIndexed, .indexable], "length \(length)")
        }
    }

    @Test func onlyIndexedReferencesLeaveTheTableAlone() {
        let view = { (bytes: [UInt8]) in ByteBuffer(bytes: bytes).readableBytesView[...] }
        #expect(HTTP2FrameEncoder.onlyReferences(view([0x82, 0x87, 0xBE])))
        #expect(HTTP2FrameEncoder.onlyReferences(view([0xFF, 0x81, 0x01, 0x82])), "an index of 127 + 129")
        #expect(!HTTP2FrameEncoder.onlyReferences(view([0x82, 0x44, 0x01, 0x61])), "a literal with incremental indexing")
        #expect(!HTTP2FrameEncoder.onlyReferences(view([0x04, 0x01, 0x61])), "a literal without indexing")
        #expect(HTTP2FrameEncoder.onlyReferences(view([])))
    }
}

extension HTTP2InboundFrame {
    /// The frame a header block of `headers` decodes to with every field kept.
    static func headers(streamID: Int32, headers: HPACKHeaders, endStream: Bool) -> HTTP2InboundFrame {
        .headers(
            streamID: streamID, head: HTTP2AnswerHead(status: headers.first(name: ":status").flatMap { Int($0) }, fields: headers),
            endStream: endStream)
    }
}
