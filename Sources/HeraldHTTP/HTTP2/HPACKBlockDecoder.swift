import NIOCore
import NIOHPACK

/// Decodes the header blocks of a connection's answers (RFC 7541), keeping HPACK's dynamic table
/// in step with the server's, and hands back the status and the fields the client reads
/// (`HTTP2AnswerFields`).
///
/// Why Herald decodes answers itself rather than with NIOHPACK's `HPACKDecoder`
/// (docs/decisions/0001-own-http2-client.md): `decodeHeaders` builds an `HPACKHeaders` list, a
/// `String` for every name and value, and a dynamic-table entry per indexed field, for answers
/// of which the client reads the status and one id. This decoder keeps the dynamic table's octets in one array
/// (`HPACKDynamicTable`), decodes Huffman strings with a nibble table (`HPACKHuffman`), and
/// builds strings only for the fields kept. NIOHPACK's tables and Huffman decoder are internal
/// to it, so they are written here from the RFC.
///
/// Every breach of RFC 7541 (an index 0 or past the tables, a truncated or overlong integer or
/// string, a Huffman string with EOS or bad padding, a table size update above the limit or
/// after a field) throws COMPRESSION_ERROR, which ends the connection (RFC 9113 §4.3).
struct HPACKBlockDecoder {
    private var table: HPACKDynamicTable
    /// The most octets a decoded list may take (names, values and 32 a field).
    let maxHeaderListSize: Int
    let keptFields: HTTP2AnswerFields
    /// The field being decoded.
    private var name: [UInt8] = []
    private var value: [UInt8] = []

    private static let statusName = Array(":status".utf8)

    /// - Parameters:
    ///   - tableCapacity: the SETTINGS_HEADER_TABLE_SIZE this client announced.
    ///   - maxHeaderListSize: the SETTINGS_MAX_HEADER_LIST_SIZE this client announced.
    init(tableCapacity: Int, maxHeaderListSize: Int, keptFields: HTTP2AnswerFields = .all) {
        table = HPACKDynamicTable(capacity: tableCapacity)
        self.maxHeaderListSize = maxHeaderListSize
        self.keptFields = keptFields
        name.reserveCapacity(64)
        value.reserveCapacity(128)
    }

    /// The dynamic table's entries and size (for tests).
    var tableCount: Int { table.count }
    var tableSize: Int { table.size }

    /// Decodes one whole header block (HEADERS and its CONTINUATION fragments joined).
    mutating func decode(_ block: ByteBuffer) throws(HTTP2ProtocolError) -> HTTP2AnswerHead {
        var result: Result<HTTP2AnswerHead, HTTP2ProtocolError>?
        block.withUnsafeReadableBytes { bytes in
            result = Result { () throws(HTTP2ProtocolError) in try decode(bytes) }
        }
        return try result!.get()
    }

    private mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(HTTP2ProtocolError) -> HTTP2AnswerHead {
        var head = HTTP2AnswerHead(status: nil, fields: HPACKHeaders())
        var position = 0
        var fields = 0
        var sizeUpdates = 0
        var listSize = 0
        var sawStatus = false
        while position < bytes.count {
            let first = bytes[position]
            let indexing: HPACKIndexing
            if first & 0x80 != 0 {
                // Indexed field (§6.1).
                let index = try Self.integer(bytes, &position, prefix: 7)
                try copyEntry(index, withValue: true)
                indexing = .indexable
            } else if first & 0xE0 == 0x20 {
                // Dynamic table size update (§6.3): only before the block's first field, at most
                // two (§4.2), never above what this client announced.
                let size = try Self.integer(bytes, &position, prefix: 5)
                sizeUpdates += 1
                guard fields == 0, sizeUpdates <= 2 else { throw Self.error("a dynamic table size update after a field") }
                guard size <= table.capacity else { throw Self.error("a dynamic table size of \(size), above \(table.capacity)") }
                table.setMaximumSize(size)
                continue
            } else {
                // A literal field (§6.2): with incremental indexing, without, or never indexed.
                let prefix: Int
                if first & 0x40 != 0 {
                    prefix = 6
                    indexing = .indexable
                } else {
                    prefix = 4
                    indexing = first & 0x10 != 0 ? .neverIndexed : .nonIndexable
                }
                let index = try Self.integer(bytes, &position, prefix: prefix)
                if index == 0 {
                    name.removeAll(keepingCapacity: true)
                    try Self.string(bytes, &position, into: &name)
                } else {
                    try copyEntry(index, withValue: false)
                }
                value.removeAll(keepingCapacity: true)
                try Self.string(bytes, &position, into: &value)
                if first & 0x40 != 0 { table.add(name: name, value: value) }
            }
            fields += 1
            listSize += name.count + value.count + 32
            guard listSize <= maxHeaderListSize else { throw Self.error("a header list above \(maxHeaderListSize) bytes") }
            if !sawStatus, HTTP2AnswerFields.name(name, is: Self.statusName) {
                sawStatus = true
                head.status = Int(String(decoding: value, as: UTF8.self))
            }
            if keptFields.keeps(name) {
                head.fields.add(
                    name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self), indexing: indexing)
            }
        }
        return head
    }

    /// Copies entry `index` of the static and dynamic tables (§2.3.3) into `name`, and its value
    /// into `value` when `withValue`.
    private mutating func copyEntry(_ index: Int, withValue: Bool) throws(HTTP2ProtocolError) {
        guard index > 0 else { throw Self.error("index 0") }
        name.removeAll(keepingCapacity: true)
        if withValue { value.removeAll(keepingCapacity: true) }
        if index <= HPACKStaticTable.count {
            let entry = HPACKStaticTable.entries[index - 1]
            name.append(contentsOf: entry.name)
            if withValue { value.append(contentsOf: entry.value) }
            return
        }
        guard table.append(entry: index - HPACKStaticTable.count, name: &name, value: &value, withValue: withValue) else {
            throw Self.error("index \(index), past the tables' \(HPACKStaticTable.count + table.count) entries")
        }
    }

    /// An integer with an N-bit prefix (§5.1), at most 2^28 and a bit.
    private static func integer(_ bytes: UnsafeRawBufferPointer, _ position: inout Int, prefix: Int) throws(HTTP2ProtocolError) -> Int {
        let mask = (1 << prefix) - 1
        var value = Int(bytes[position]) & mask
        position += 1
        guard value == mask else { return value }
        var shift = 0
        while true {
            guard position < bytes.count else { throw error("a truncated integer") }
            let byte = bytes[position]
            position += 1
            value += Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift <= 21 else { throw error("an integer of more than 28 bits") }
        }
    }

    /// A string literal (§5.2), appended to `output` as its octets (Huffman-decoded when coded).
    private static func string(_ bytes: UnsafeRawBufferPointer, _ position: inout Int, into output: inout [UInt8])
        throws(HTTP2ProtocolError)
    {
        guard position < bytes.count else { throw error("a field without its string") }
        let huffman = bytes[position] & 0x80 != 0
        let length = try integer(bytes, &position, prefix: 7)
        guard length <= bytes.count - position else { throw error("a string of \(length) bytes past the block's end") }
        let octets = UnsafeRawBufferPointer(rebasing: bytes[position..<position + length])
        position += length
        if huffman {
            guard HPACKHuffman.decode(octets, into: &output) else { throw error("a Huffman string with EOS or bad padding") }
        } else {
            output.append(contentsOf: octets)
        }
    }

    private static func error(_ reason: String) -> HTTP2ProtocolError {
        HTTP2ProtocolError(HTTP2Wire.ErrorCode.compressionError, "header block: \(reason)")
    }
}
