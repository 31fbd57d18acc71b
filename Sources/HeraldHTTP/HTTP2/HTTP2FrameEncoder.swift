import NIOCore
import NIOHPACK

/// Writes a client's HTTP/2 frames (RFC 9113 §6) into a `ByteBuffer`, header blocks compressed
/// with NIOHPACK's encoder and split into CONTINUATION frames above the server's
/// SETTINGS_MAX_FRAME_SIZE.
struct HTTP2FrameEncoder {
    private var hpack: HPACKEncoder
    /// The largest frame payload the server accepts (its SETTINGS_MAX_FRAME_SIZE).
    var maxFrameSize = HTTP2Wire.defaultMaxFrameSize
    /// The runs of indexable fields of the last header block, and their bytes, while those bytes
    /// are references into the dynamic table alone (see `encodeBlock`).
    private var reusable: [(fields: HPACKHeaders, bytes: [UInt8])]?

    init(allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        // String literals go as they are, not Huffman-coded: the one a request carries that is
        // new each time, APNs's `:path` with the device's token, cost 5 % of the serve process's
        // CPU in Huffman coding in the h2o fan-out, to save ≈ 20 of a request's ≈ 290 bytes
        // (BENCHMARKS.md, issue 18). The fields that repeat are dynamic-table references anyway.
        hpack = HPACKEncoder(allocator: allocator, useHuffmanEncoding: false)
    }

    /// Applies the server's SETTINGS_HEADER_TABLE_SIZE: the encoder's dynamic table stays within
    /// it (and within HPACK's default 4,096 bytes, to bound this side's memory).
    mutating func setHeaderTableSize(_ size: Int) {
        // Only fails while a block is being encoded, which never spans a call.
        try? hpack.setDynamicTableSize(min(size, HPACKEncoder.defaultDynamicTableSize))
        // Evictions renumber the table.
        reusable = nil
    }

    // MARK: Connection frames

    /// The client's connection preface and its SETTINGS.
    func writePreface(settings: [(UInt16, UInt32)], into buffer: inout ByteBuffer) {
        buffer.writeStaticString(HTTP2Wire.preface)
        writeSettings(settings, into: &buffer)
    }

    func writeSettings(_ settings: [(UInt16, UInt32)], into buffer: inout ByteBuffer) {
        writeFrameHeader(length: settings.count * 6, type: .settings, flags: 0, streamID: 0, into: &buffer)
        for (identifier, value) in settings {
            buffer.writeInteger(identifier)
            buffer.writeInteger(value)
        }
    }

    func writeSettingsAck(into buffer: inout ByteBuffer) {
        writeFrameHeader(length: 0, type: .settings, flags: HTTP2Wire.Flag.ack, streamID: 0, into: &buffer)
    }

    func writePing(_ opaque: UInt64, ack: Bool, into buffer: inout ByteBuffer) {
        writeFrameHeader(length: 8, type: .ping, flags: ack ? HTTP2Wire.Flag.ack : 0, streamID: 0, into: &buffer)
        buffer.writeInteger(opaque)
    }

    func writeWindowUpdate(streamID: Int32, increment: Int, into buffer: inout ByteBuffer) {
        writeFrameHeader(length: 4, type: .windowUpdate, flags: 0, streamID: streamID, into: &buffer)
        buffer.writeInteger(UInt32(increment))
    }

    func writeGoAway(lastStreamID: Int32, errorCode: UInt32, into buffer: inout ByteBuffer) {
        writeFrameHeader(length: 8, type: .goAway, flags: 0, streamID: 0, into: &buffer)
        buffer.writeInteger(UInt32(lastStreamID))
        buffer.writeInteger(errorCode)
    }

    // MARK: Stream frames

    func writeRSTStream(streamID: Int32, errorCode: UInt32, into buffer: inout ByteBuffer) {
        writeFrameHeader(length: 4, type: .rstStream, flags: 0, streamID: streamID, into: &buffer)
        buffer.writeInteger(errorCode)
    }

    /// A HEADERS frame (and CONTINUATION frames if the block exceeds `maxFrameSize`).
    mutating func writeHeaders(
        _ headers: HPACKHeaders, streamID: Int32, endStream: Bool, into buffer: inout ByteBuffer
    ) throws {
        let start = buffer.writerIndex
        buffer.writeRepeatingByte(0, count: HTTP2Wire.frameHeaderSize)
        do {
            try encodeBlock(headers, into: &buffer)
        } catch {
            buffer.moveWriterIndex(to: start)
            throw error
        }
        let length = buffer.writerIndex - start - HTTP2Wire.frameHeaderSize
        let endStreamFlag = endStream ? HTTP2Wire.Flag.endStream : 0
        if length <= maxFrameSize {
            setFrameHeader(
                at: start, length: length, type: .headers, flags: endStreamFlag | HTTP2Wire.Flag.endHeaders, streamID: streamID,
                in: &buffer)
            return
        }
        // Rare (a block above 16 KiB): take the block out and write it again in pieces.
        var block = buffer.getSlice(at: start + HTTP2Wire.frameHeaderSize, length: length)!
        buffer.moveWriterIndex(to: start)
        var type = HTTP2Wire.FrameType.headers
        while block.readableBytes > 0 {
            var piece = block.readSlice(length: min(maxFrameSize, block.readableBytes))!
            let last = block.readableBytes == 0
            let flags = (type == .headers ? endStreamFlag : 0) | (last ? HTTP2Wire.Flag.endHeaders : 0)
            writeFrameHeader(length: piece.readableBytes, type: type, flags: flags, streamID: streamID, into: &buffer)
            buffer.writeBuffer(&piece)
            type = .continuation
        }
    }

    /// Encodes a header block with NIOHPACK, reusing the bytes of the fields it shares with the
    /// last block when that is sound.
    ///
    /// A batch's requests share every field but the few that are not indexed: APNs sends the
    /// never-indexed `:path` with the device's token and the notification's `apns-id` among the
    /// same nine fields (`:path` first, the `apns-id` after the other pseudo-headers, which must
    /// all come before regular fields: RFC 9113 §8.3). Once the nine are in HPACK's dynamic table,
    /// they encode as references alone (RFC 7541 §6.1), which change nothing in the table; so
    /// while nothing has been inserted since, encoding them again would give the same bytes.
    /// Those bytes are kept, run by run of indexable fields, and written between the fields that
    /// are encoded each time, instead of hashing nine names and values into the table for every
    /// request (14 % of the serve process's CPU in the h2o fan-out). Any block that is not
    /// references alone apart from its never-indexed fields (it may have inserted) drops the kept
    /// bytes, as does a change of the table's size.
    private mutating func encodeBlock(_ headers: HPACKHeaders, into buffer: inout ByteBuffer) throws {
        let runs = Self.runs(headers)
        if let reusable, reusable.count == runs.lazy.filter(\.indexable).count {
            var shared = 0
            let same = runs.allSatisfy { run in
                guard run.indexable else { return true }
                defer { shared += 1 }
                let kept = reusable[shared].fields
                return kept.count == headers[run.range].count
                    && zip(headers[run.range], kept).allSatisfy {
                        $0.name == $1.name && $0.value == $1.value && $0.indexable == $1.indexable
                    }
            }
            if same {
                shared = 0
                for run in runs {
                    if run.indexable {
                        buffer.writeBytes(reusable[shared].bytes)
                        shared += 1
                    } else {
                        // Without indexing: the table stays as it was.
                        try hpack.encode(headers: Self.fields(headers[run.range]), to: &buffer)
                    }
                }
                return
            }
        }
        var kept: [(fields: HPACKHeaders, bytes: [UInt8])] = []
        var referencesAlone = true
        for run in runs {
            let fields = Self.fields(headers[run.range])
            let start = buffer.writerIndex
            try hpack.encode(headers: fields, to: &buffer)
            guard run.indexable else { continue }
            let bytes = buffer.readableBytesView[start...]
            if Self.onlyReferences(bytes) {
                kept.append((fields, Array(bytes)))
            } else {
                referencesAlone = false
            }
        }
        reusable = referencesAlone && !kept.isEmpty ? kept : nil
    }

    /// The block cut into runs of consecutive fields alike in whether they may be indexed.
    private static func runs(_ headers: HPACKHeaders) -> [(indexable: Bool, range: Range<HPACKHeaders.Index>)] {
        var runs: [(indexable: Bool, range: Range<HPACKHeaders.Index>)] = []
        var start = headers.startIndex
        while start < headers.endIndex {
            let indexable = headers[start].indexable == .indexable
            var end = headers.index(after: start)
            while end < headers.endIndex, (headers[end].indexable == .indexable) == indexable { end = headers.index(after: end) }
            runs.append((indexable, start..<end))
            start = end
        }
        return runs
    }

    private static func fields(_ slice: HPACKHeaders.SubSequence) -> HPACKHeaders {
        var fields = HPACKHeaders()
        fields.reserveCapacity(slice.count)
        for field in slice { fields.add(name: field.name, value: field.value, indexing: field.indexable) }
        return fields
    }

    /// Whether the encoded fields are all indexed references (RFC 7541 §6.1: a first bit of 1,
    /// then the index as an integer with a 7-bit prefix), which leave the dynamic table unchanged.
    static func onlyReferences(_ bytes: ByteBufferView.SubSequence) -> Bool {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte & 0x80 != 0 else { return false }
            index = bytes.index(after: index)
            // A prefix of all ones continues in bytes whose top bit says whether more follow.
            guard byte & 0x7F == 0x7F else { continue }
            while index < bytes.endIndex, bytes[index] & 0x80 != 0 { index = bytes.index(after: index) }
            index = bytes.index(after: index)
        }
        return true
    }

    /// One DATA frame; `data` must fit in `maxFrameSize`.
    func writeData(_ data: ByteBuffer, streamID: Int32, endStream: Bool, into buffer: inout ByteBuffer) {
        var data = data
        writeFrameHeader(
            length: data.readableBytes, type: .data, flags: endStream ? HTTP2Wire.Flag.endStream : 0, streamID: streamID, into: &buffer)
        buffer.writeBuffer(&data)
    }

    // MARK: Frame headers

    func writeFrameHeader(length: Int, type: HTTP2Wire.FrameType, flags: UInt8, streamID: Int32, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt16(truncatingIfNeeded: length >> 8))
        buffer.writeInteger(UInt8(truncatingIfNeeded: length))
        buffer.writeInteger(type.rawValue)
        buffer.writeInteger(flags)
        buffer.writeInteger(UInt32(streamID))
    }

    private func setFrameHeader(
        at index: Int, length: Int, type: HTTP2Wire.FrameType, flags: UInt8, streamID: Int32, in buffer: inout ByteBuffer
    ) {
        buffer.setInteger(UInt16(truncatingIfNeeded: length >> 8), at: index)
        buffer.setInteger(UInt8(truncatingIfNeeded: length), at: index + 2)
        buffer.setInteger(type.rawValue, at: index + 3)
        buffer.setInteger(flags, at: index + 4)
        buffer.setInteger(UInt32(streamID), at: index + 5)
    }
}
