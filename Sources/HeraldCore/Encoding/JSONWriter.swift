import NIOCore

/// Writes a JSON object straight into a buffer: for the hottest paths (a registration's answer,
/// a batch of registrations handed to PostgreSQL), where Foundation's `JSONEncoder` cost more
/// than the rest of the work.
package struct JSONWriter {
    public private(set) var buffer: ByteBuffer
    private var first = true

    package init(capacity: Int = 512) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
        buffer.writeInteger(UInt8(ascii: "{"))
    }

    package mutating func field(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { Self.string(value, into: &buffer) } else { buffer.writeStaticString("null") }
    }

    package mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        buffer.writeStaticString(value ? "true" : "false")
    }

    package mutating func field(_ key: StaticString, _ value: Int64) {
        self.key(key)
        buffer.writeString(String(value))
    }

    /// A list of `{"text": …}` objects, the Pivotal shape of tags.
    package mutating func textObjects(_ key: StaticString, _ values: [String]) {
        self.key(key)
        buffer.writeInteger(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            buffer.writeStaticString("{\"text\":")
            Self.string(value, into: &buffer)
            buffer.writeInteger(UInt8(ascii: "}"))
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// The finished object.
    package mutating func finish() -> ByteBuffer {
        buffer.writeInteger(UInt8(ascii: "}"))
        return buffer
    }

    private mutating func key(_ key: StaticString) {
        if !first { buffer.writeInteger(UInt8(ascii: ",")) }
        first = false
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(key)
        buffer.writeStaticString("\":")
    }

    /// A JSON string, escaped per RFC 8259. Runs of bytes that need no escape (all of them, in
    /// tokens, ids and most tags) are copied at once.
    package static func string(_ value: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                escape(byte, into: &buffer)
                start = index + 1
            }
            buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    private static func escape(_ byte: UInt8, into buffer: inout ByteBuffer) {
        switch byte {
        case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
        case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
        case 0x0a: buffer.writeStaticString("\\n")
        case 0x0d: buffer.writeStaticString("\\r")
        case 0x09: buffer.writeStaticString("\\t")
        default:
            buffer.writeStaticString("\\u00")
            buffer.writeInteger(Hex.digit(byte >> 4))
            buffer.writeInteger(Hex.digit(byte & 0x0f))
        }
    }
}
