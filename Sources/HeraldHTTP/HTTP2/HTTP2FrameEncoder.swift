import Foundation
import HeraldCore
import NIOCore
import NIOHPACK

/// Writes a client's HTTP/2 frames (RFC 9113 §6) into a `ByteBuffer`, header blocks compressed
/// with NIOHPACK's encoder and split into CONTINUATION frames above the server's
/// SETTINGS_MAX_FRAME_SIZE.
struct HTTP2FrameEncoder {
    private var hpack: HPACKEncoder
    /// The largest frame payload the server accepts (its SETTINGS_MAX_FRAME_SIZE).
    var maxFrameSize = HTTP2Wire.defaultMaxFrameSize
    /// What the last header block left to reuse (see `encodeBlock`).
    private var kept: Kept? {
        // Whatever replaces or drops the kept bytes ends their use for shared fields too.
        didSet { keptShared = nil }
    }
    /// The kept bytes as the shared fields they were last written for (see `encodeBlock(_:pathSuffix:id:into:)`).
    private var keptShared: KeptShared?
    /// Whether the table's size changed since the last block (its update opens the next one).
    private var sizeChanged = false

    init(allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        // String literals go as they are, not Huffman-coded: the one a request carries that is
        // new each time, APNs's `:path` with the device's token, costs more CPU to code than the
        // few bytes it saves are worth (docs/benchmarks-history.md, issue 18). The fields that
        // repeat are dynamic-table references anyway.
        hpack = HPACKEncoder(allocator: allocator, useHuffmanEncoding: false)
    }

    /// Applies the server's SETTINGS_HEADER_TABLE_SIZE: the encoder's dynamic table stays within
    /// it (and within HPACK's default 4,096 bytes, to bound this side's memory).
    mutating func setHeaderTableSize(_ size: Int) {
        // Only fails while a block is being encoded, which never spans a call.
        try? hpack.setDynamicTableSize(min(size, HPACKEncoder.defaultDynamicTableSize))
        // Evictions renumber the table.
        kept = nil
        sizeChanged = true
    }

    // MARK: Connection frames

    /// The client's connection preface and its SETTINGS.
    static func writePreface(settings: [(UInt16, UInt32)], into buffer: inout ByteBuffer) {
        buffer.writeStaticString(HTTP2Wire.preface)
        Self.writeSettings(settings, into: &buffer)
    }

    static func writeSettings(_ settings: [(UInt16, UInt32)], into buffer: inout ByteBuffer) {
        Self.writeFrameHeader(length: settings.count * 6, type: .settings, flags: 0, streamID: 0, into: &buffer)
        for (identifier, value) in settings {
            buffer.writeInteger(identifier)
            buffer.writeInteger(value)
        }
    }

    static func writeSettingsAck(into buffer: inout ByteBuffer) {
        Self.writeFrameHeader(length: 0, type: .settings, flags: HTTP2Wire.Flag.ack, streamID: 0, into: &buffer)
    }

    static func writePing(_ opaque: UInt64, ack: Bool, into buffer: inout ByteBuffer) {
        Self.writeFrameHeader(length: 8, type: .ping, flags: ack ? HTTP2Wire.Flag.ack : 0, streamID: 0, into: &buffer)
        buffer.writeInteger(opaque)
    }

    static func writeWindowUpdate(streamID: Int32, increment: Int, into buffer: inout ByteBuffer) {
        Self.writeFrameHeader(length: 4, type: .windowUpdate, flags: 0, streamID: streamID, into: &buffer)
        buffer.writeInteger(UInt32(increment))
    }

    static func writeGoAway(lastStreamID: Int32, errorCode: UInt32, into buffer: inout ByteBuffer) {
        Self.writeFrameHeader(length: 8, type: .goAway, flags: 0, streamID: 0, into: &buffer)
        buffer.writeInteger(UInt32(lastStreamID))
        buffer.writeInteger(errorCode)
    }

    // MARK: Stream frames

    static func writeRSTStream(streamID: Int32, errorCode: UInt32, into buffer: inout ByteBuffer) {
        Self.writeFrameHeader(length: 4, type: .rstStream, flags: 0, streamID: streamID, into: &buffer)
        buffer.writeInteger(errorCode)
    }

    /// A HEADERS frame (and CONTINUATION frames if the block exceeds `maxFrameSize`).
    mutating func writeHeaders(
        _ headers: HPACKHeaders, streamID: Int32, endStream: Bool, into buffer: inout ByteBuffer
    ) throws {
        try writeHeaders(.fields(headers), streamID: streamID, endStream: endStream, into: &buffer)
    }

    /// A request's HEADERS frame (and CONTINUATION frames if the block exceeds `maxFrameSize`).
    mutating func writeHeaders(
        _ head: HTTP2Request.Head, streamID: Int32, endStream: Bool, into buffer: inout ByteBuffer
    ) throws {
        let start = buffer.writerIndex
        buffer.writeRepeatingByte(0, count: HTTP2Wire.frameHeaderSize)
        do {
            switch head {
            case .fields(let headers):
                try encodeBlock(headers, into: &buffer)
            case .shared(let shared, let pathSuffix, let id):
                try encodeBlock(shared, pathSuffix: pathSuffix, id: id, into: &buffer)
            }
        } catch {
            buffer.moveWriterIndex(to: start)
            throw error
        }
        let length = buffer.writerIndex - start - HTTP2Wire.frameHeaderSize
        let endStreamFlag = endStream ? HTTP2Wire.Flag.endStream : 0
        if length <= maxFrameSize {
            Self.setFrameHeader(
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
            Self.writeFrameHeader(length: piece.readableBytes, type: type, flags: flags, streamID: streamID, into: &buffer)
            buffer.writeBuffer(&piece)
            type = .continuation
        }
    }

    /// Encodes a header block, reusing the bytes of the fields it shares with the last block when
    /// that is sound.
    ///
    /// A batch's requests share every field but the few that are not indexed: APNs sends the
    /// `:path` with the device's token and the notification's `apns-id` among the same nine fields
    /// (`:path` first, the `apns-id` after the other pseudo-headers, which must all come before
    /// regular fields: RFC 9113 §8.3). Once the nine are in HPACK's dynamic table, they encode as
    /// references alone (RFC 7541 §6.1), which change nothing in the table; so while nothing has
    /// been inserted since, encoding them again would give the same bytes. Those bytes are kept,
    /// run by run of indexable fields, and written between the fields that change, instead of
    /// hashing nine names and values into the table for every request, a large share of a
    /// fan-out's CPU. Any block that is not references alone apart from its
    /// unindexed fields (it may have inserted) drops the kept bytes, as does a change of the
    /// table's size. The unindexed fields are written here as literals (`writeLiteral`).
    private mutating func encodeBlock(_ headers: HPACKHeaders, into buffer: inout ByteBuffer) throws {
        if sizeChanged {
            // A size update must open the next block (RFC 7541 §4.2): NIOHPACK writes it first.
            sizeChanged = false
            kept = nil
            try hpack.encode(headers: headers, to: &buffer)
            return
        }
        if let kept, kept.matches(headers) {
            var run = 0
            var inRun = false
            for field in headers {
                if field.indexable == .indexable {
                    // A run's bytes go once, where the run starts.
                    if !inRun {
                        buffer.writeBytes(kept.runs[run])
                        run += 1
                    }
                    inRun = true
                } else {
                    inRun = false
                    Self.writeLiteral(field.name, field.value, neverIndexed: field.indexable == .neverIndexed, into: &buffer)
                }
            }
            return
        }
        var pattern: [Bool] = []
        var fields: [(name: String, value: String)] = []
        var runs: [[UInt8]] = []
        var referencesAlone = true
        var run = HPACKHeaders()
        func encodeRun() throws {
            guard !run.isEmpty else { return }
            let start = buffer.writerIndex
            try hpack.encode(headers: run, to: &buffer)
            let bytes = buffer.readableBytesView[start...]
            if Self.onlyReferences(bytes) { runs.append(Array(bytes)) } else { referencesAlone = false }
            run = HPACKHeaders()
        }
        for field in headers {
            let indexable = field.indexable == .indexable
            pattern.append(indexable)
            if indexable {
                run.add(name: field.name, value: field.value)
                fields.append((field.name, field.value))
            } else {
                try encodeRun()
                Self.writeLiteral(field.name, field.value, neverIndexed: field.indexable == .neverIndexed, into: &buffer)
            }
        }
        try encodeRun()
        kept = referencesAlone && !runs.isEmpty ? Kept(pattern: pattern, fields: fields, runs: runs) : nil
    }

    /// A request of a batch (`HTTP2Request(shared:…)`): while the kept bytes are those of
    /// `shared`'s fields, the block is written from them and the two per-request values alone,
    /// with no header list built or compared (the fan-out's path: an `HPACKHeaders` built and
    /// taken apart per request only costs CPU; docs/decisions/0001). Otherwise,
    /// as for the first requests of a batch, through the general path, which keeps the bytes.
    private mutating func encodeBlock(
        _ shared: HTTP2SharedHeaders, pathSuffix: String, id: UUID, into buffer: inout ByteBuffer
    ) throws {
        if !sizeChanged, let keptShared, keptShared.shared === shared {
            Self.writeKeptBlock(keptShared, pathSuffix: pathSuffix, id: id, into: &buffer)
            return
        }
        try encodeBlock(shared.headers(pathSuffix: pathSuffix, id: id), into: &buffer)
        // The kept runs are now those of `shared`'s fields: the pseudo-headers', then the rest's.
        // (Checked by shape: `Kept` is the general path's, a copy of its arrays per block would
        // cost more retains than the header list saved.)
        guard let kept, kept.runs.count == (shared.pseudoHeaders.isEmpty ? 0 : 1) + (shared.fields.isEmpty ? 0 : 1) else { return }
        let pseudoHeaders = shared.pseudoHeaders.isEmpty ? [] : kept.runs[0]
        let fields = shared.fields.isEmpty ? [] : kept.runs[kept.runs.count - 1]
        keptShared = KeptShared(shared: shared, pseudoHeaders: pseudoHeaders, fields: fields)
    }

    /// The kept bytes of a batch's shared fields, in one reference so that the fast path retains
    /// one object, not `Kept`'s arrays.
    private final class KeptShared {
        let shared: HTTP2SharedHeaders
        let pseudoHeaders: [UInt8]
        let fields: [UInt8]

        init(shared: HTTP2SharedHeaders, pseudoHeaders: [UInt8], fields: [UInt8]) {
            self.shared = shared
            self.pseudoHeaders = pseudoHeaders
            self.fields = fields
        }
    }

    /// What `encodeBlock` keeps of the last block while its indexable fields were references
    /// alone: which of its fields were indexable, those fields, and the bytes of each run of them.
    private struct Kept {
        let pattern: [Bool]
        let fields: [(name: String, value: String)]
        let runs: [[UInt8]]

        /// Whether `headers` has the same indexable fields in the same places.
        func matches(_ headers: HPACKHeaders) -> Bool {
            guard headers.count == pattern.count else { return false }
            var position = 0
            var shared = 0
            for field in headers {
                let indexable = field.indexable == .indexable
                guard indexable == pattern[position] else { return false }
                position += 1
                guard indexable else { continue }
                guard field.name == fields[shared].name, field.value == fields[shared].value else { return false }
                shared += 1
            }
            return true
        }
    }

    /// A field as a literal without indexing (RFC 7541 §6.2.2) or never indexed (§6.2.3), its
    /// strings as they are (no Huffman): it leaves the dynamic table alone, so it can sit between
    /// kept bytes. Written here rather than by NIOHPACK, whose encoder searches its tables for the
    /// name first (a hash of it for every request); `:path` refers to its static-table entry
    /// (index 4), other names go as literals.
    static func writeLiteral(_ name: String, _ value: String, neverIndexed: Bool, into buffer: inout ByteBuffer) {
        writeLiteralName(name, neverIndexed: neverIndexed, into: &buffer)
        writeInteger(value.utf8.count, prefix: 7, flags: 0, into: &buffer)
        buffer.writeString(value)
    }

    /// A block of kept shared fields, in one write: `:path` (`writeLiteral`'s form, its value
    /// the prefix and `pathSuffix`), the kept pseudo-header bytes, the id as a literal (its
    /// value `UUID.lowercasedString`) and the kept bytes of the other fields. One write, not one
    /// for each piece, because each `ByteBuffer` write checks its storage's uniqueness and
    /// exclusive access (see `writeFrameHeader`).
    private static func writeKeptBlock(_ kept: KeptShared, pathSuffix: String, id: UUID, into buffer: inout ByteBuffer) {
        var prefix = kept.shared.pathPrefix
        var suffix = pathSuffix
        var idName = kept.shared.idName
        let pathLength = prefix.utf8.count + suffix.utf8.count
        let most = 2 * (1 + maximumIntegerBytes) + pathLength + kept.pseudoHeaders.count + idName.utf8.count + 1 + 36 + kept.fields.count
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: most) { out in
            var at = 0
            func copy(_ bytes: some Collection<UInt8>) {
                UnsafeMutableRawBufferPointer(rebasing: out[at...]).copyBytes(from: bytes)
                at += bytes.count
            }
            // `:path` by its static-table index (4), without indexing.
            writeInteger(4, prefix: 4, flags: 0, into: out, at: &at)
            writeInteger(pathLength, prefix: 7, flags: 0, into: out, at: &at)
            prefix.withUTF8 { copy($0) }
            suffix.withUTF8 { copy($0) }
            copy(kept.pseudoHeaders)
            // The id: a new name, without indexing.
            out[at] = 0
            at += 1
            writeInteger(idName.utf8.count, prefix: 7, flags: 0, into: out, at: &at)
            idName.withUTF8 { copy($0) }
            writeInteger(36, prefix: 7, flags: 0, into: out, at: &at)
            at += id.writeLowercased(into: UnsafeMutableRawBufferPointer(rebasing: out[at...]))
            copy(kept.fields)
            return at
        }
    }

    /// The start of a literal field (RFC 7541 §6.2.2, §6.2.3), up to its value: `:path` by its
    /// static-table index (4), any other name as a string.
    private static func writeLiteralName(_ name: String, neverIndexed: Bool, into buffer: inout ByteBuffer) {
        let flags: UInt8 = neverIndexed ? 0x10 : 0x00
        if name == ":path" {
            writeInteger(4, prefix: 4, flags: flags, into: &buffer)
        } else {
            buffer.writeInteger(flags)
            writeInteger(name.utf8.count, prefix: 7, flags: 0, into: &buffer)
            buffer.writeString(name)
        }
    }

    /// An integer with an N-bit prefix (RFC 7541 §5.1), `flags` in the bits above it.
    static func writeInteger(_ value: Int, prefix: Int, flags: UInt8, into buffer: inout ByteBuffer) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maximumIntegerBytes) { out in
            var at = 0
            writeInteger(value, prefix: prefix, flags: flags, into: out, at: &at)
            return at
        }
    }

    /// The most bytes `writeInteger` writes: the prefix's and 7 bits in each of the rest.
    private static let maximumIntegerBytes = 1 + (Int.bitWidth + 6) / 7

    /// `writeInteger` at `out[at]`, moving `at` past it.
    private static func writeInteger(_ value: Int, prefix: Int, flags: UInt8, into out: UnsafeMutableRawBufferPointer, at: inout Int) {
        let limit = (1 << prefix) - 1
        guard value >= limit else {
            out[at] = flags | UInt8(value)
            at += 1
            return
        }
        out[at] = flags | UInt8(limit)
        at += 1
        var rest = value - limit
        while rest >= 128 {
            out[at] = UInt8(rest & 0x7F) | 0x80
            at += 1
            rest >>= 7
        }
        out[at] = UInt8(rest)
        at += 1
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
    static func writeData(_ data: ByteBuffer, streamID: Int32, endStream: Bool, into buffer: inout ByteBuffer) {
        var data = data
        Self.writeFrameHeader(
            length: data.readableBytes, type: .data, flags: endStream ? HTTP2Wire.Flag.endStream : 0, streamID: streamID, into: &buffer)
        buffer.writeBuffer(&data)
    }

    // MARK: Frame headers

    /// The 9-byte frame header (RFC 9113 §4.1) as two writes, not one for each field: every
    /// `ByteBuffer` write checks its storage's uniqueness and exclusive access, which was ≈ 8 %
    /// of the serve process's CPU in an h2o fan-out's profile (issue 18).
    static func writeFrameHeader(length: Int, type: HTTP2Wire.FrameType, flags: UInt8, streamID: Int32, into buffer: inout ByteBuffer) {
        let (head, last) = frameHeader(length: length, type: type, flags: flags, streamID: streamID)
        buffer.writeInteger(head)
        buffer.writeInteger(last)
    }

    private static func setFrameHeader(
        at index: Int, length: Int, type: HTTP2Wire.FrameType, flags: UInt8, streamID: Int32, in buffer: inout ByteBuffer
    ) {
        let (head, last) = frameHeader(length: length, type: type, flags: flags, streamID: streamID)
        buffer.setInteger(head, at: index)
        buffer.setInteger(last, at: index + 8)
    }

    /// A frame header's first eight bytes (length, type, flags and the stream id's first three
    /// bytes, in network order) and its ninth.
    private static func frameHeader(length: Int, type: HTTP2Wire.FrameType, flags: UInt8, streamID: Int32) -> (UInt64, UInt8) {
        let stream = UInt64(UInt32(bitPattern: streamID) & 0x7FFF_FFFF)
        let head = UInt64(length & 0xFF_FFFF) << 40 | UInt64(type.rawValue) << 32 | UInt64(flags) << 24 | stream >> 8
        return (head, UInt8(truncatingIfNeeded: stream))
    }
}
