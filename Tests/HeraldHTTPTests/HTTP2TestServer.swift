import NIOCore
import NIOEmbedded
import NIOHPACK
import Testing

@testable import HeraldHTTP

/// A frame as the test server reads it from the client's bytes.
struct RawFrame {
    let type: UInt8
    let flags: UInt8
    let streamID: Int32
    var payload: ByteBuffer
}

/// The server side of an `HTTP2ConnectionHandler` on an `EmbeddedChannel`: it cuts the client's
/// bytes into frames with a parser of its own (not the client's decoder) and writes the server's
/// frames as bytes, header blocks with NIOHPACK.
final class HTTP2TestServer {
    let channel: EmbeddedChannel
    let handler: HTTP2ConnectionHandler
    private var pending = ByteBuffer()
    private var sawPreface = false
    private var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
    private var decoder = HPACKDecoder(allocator: ByteBufferAllocator(), maxDynamicTableSize: 4096, maxHeaderListSize: 1 << 17)

    init(firstStreamID: Int32 = 1, validatesHeaderBlocks: Bool = true) throws {
        handler = HTTP2ConnectionHandler(
            requestTimeout: .seconds(30), validatesHeaderBlocks: validatesHeaderBlocks, firstStreamID: firstStreamID)
        channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        // The preface: SETTINGS, and the connection's receive window widened.
        let opening = try frames()
        #expect(opening.map(\.type) == [0x4, 0x8])
    }

    // MARK: The client's frames

    /// The frames the client wrote since the last call, once its event loop has run.
    func frames() throws -> [RawFrame] {
        channel.embeddedEventLoop.run()
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(var bytes) = data else { continue }
            pending.writeBuffer(&bytes)
        }
        if !sawPreface {
            let preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
            #expect(pending.readString(length: preface.utf8.count) == preface)
            sawPreface = true
        }
        var frames: [RawFrame] = []
        while pending.readableBytes >= 9 {
            let start = pending.readerIndex
            let length = Int(pending.getInteger(at: start, as: UInt16.self)!) << 8 | Int(pending.getInteger(at: start + 2, as: UInt8.self)!)
            guard pending.readableBytes >= 9 + length else { break }
            pending.moveReaderIndex(forwardBy: 3)
            let type = pending.readInteger(as: UInt8.self)!
            let flags = pending.readInteger(as: UInt8.self)!
            let streamID = Int32(bitPattern: pending.readInteger(as: UInt32.self)! & 0x7FFF_FFFF)
            frames.append(RawFrame(type: type, flags: flags, streamID: streamID, payload: pending.readSlice(length: length)!))
        }
        return frames
    }

    /// The streams whose HEADERS the client wrote since the last call.
    func opened() throws -> [Int] {
        try frames().filter { $0.type == 0x1 }.map { Int($0.streamID) }
    }

    /// Decodes a header block the client sent (HEADERS and CONTINUATION payloads, in order).
    func decode(_ fragments: [RawFrame]) throws -> HPACKHeaders {
        var block = ByteBuffer()
        for var fragment in fragments { block.writeBuffer(&fragment.payload) }
        return try decoder.decodeHeaders(from: &block)
    }

    // MARK: The server's frames

    func send(type: UInt8, flags: UInt8 = 0, streamID: Int32, payload: ByteBuffer = ByteBuffer()) throws {
        var bytes = ByteBuffer()
        bytes.writeInteger(UInt16(payload.readableBytes >> 8))
        bytes.writeInteger(UInt8(truncatingIfNeeded: payload.readableBytes))
        bytes.writeInteger(type)
        bytes.writeInteger(flags)
        bytes.writeInteger(UInt32(streamID))
        var payload = payload
        bytes.writeBuffer(&payload)
        try channel.writeInbound(bytes)
        channel.embeddedEventLoop.run()
    }

    func settings(_ settings: [(UInt16, UInt32)]) throws {
        var payload = ByteBuffer()
        for (identifier, value) in settings {
            payload.writeInteger(identifier)
            payload.writeInteger(value)
        }
        try send(type: 0x4, streamID: 0, payload: payload)
    }

    func settings(maxConcurrentStreams: Int) throws {
        try settings([(0x3, UInt32(maxConcurrentStreams))])
    }

    func headerBlock(_ headers: HPACKHeaders) throws -> ByteBuffer {
        var block = ByteBuffer()
        try encoder.encode(headers: headers, to: &block)
        return block
    }

    func answer(_ streamID: Int, status: Int = 200) throws {
        try send(type: 0x1, flags: 0x5, streamID: Int32(streamID), payload: headerBlock([":status": "\(status)"]))
    }

    func reset(_ streamID: Int, code: UInt32) throws {
        var payload = ByteBuffer()
        payload.writeInteger(code)
        try send(type: 0x3, streamID: Int32(streamID), payload: payload)
    }

    func goAway(lastStreamID: Int, code: UInt32 = 0) throws {
        var payload = ByteBuffer()
        payload.writeInteger(UInt32(lastStreamID))
        payload.writeInteger(code)
        try send(type: 0x7, streamID: 0, payload: payload)
    }

    func windowUpdate(_ streamID: Int, _ increment: Int) throws {
        var payload = ByteBuffer()
        payload.writeInteger(UInt32(increment))
        try send(type: 0x8, streamID: Int32(streamID), payload: payload)
    }

    // MARK: Requests

    /// Hands `count` requests over as one batch.
    func send(_ count: Int, body: ByteBuffer = ByteBuffer(string: "x"), headers: HPACKHeaders = [":method": "POST", ":path": "/"])
        -> HTTP2ConnectionHandler.Batch
    {
        let requests = (0..<count).map { _ in HTTP2Request(headers: headers, body: body) }
        let batch = HTTP2ConnectionHandler.Batch(requests: requests, promise: channel.eventLoop.makePromise())
        handler.enqueue(batch)
        return batch
    }

    static func describe(_ results: [HTTP2Response?]) -> [String] {
        results.map { response in
            switch response {
            case .answered(let status, _, _)?: "\(status)"
            case .notSent?: "not sent"
            case .failed?: "failed"
            case nil: "waiting"
            }
        }
    }
}
