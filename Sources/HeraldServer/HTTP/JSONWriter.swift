import NIOCore

/// Writes a JSON object straight into a buffer: for the hottest answers (a registration),
/// where Foundation's `JSONEncoder` cost more than the rest of the request.
struct JSONWriter {
    private(set) var buffer: ByteBuffer
    private var first = true

    init(capacity: Int = 512) {
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
        buffer.writeInteger(UInt8(ascii: "{"))
    }

    mutating func field(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { buffer.writeStaticString("null") }
    }

    mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        buffer.writeStaticString(value ? "true" : "false")
    }

    /// A list of `{"text": …}` objects, the Pivotal shape of tags.
    mutating func textObjects(_ key: StaticString, _ values: [String]) {
        self.key(key)
        buffer.writeInteger(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            buffer.writeStaticString("{\"text\":")
            string(value)
            buffer.writeInteger(UInt8(ascii: "}"))
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// The finished object.
    mutating func finish() -> ByteBuffer {
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

    /// A JSON string, escaped per RFC 8259.
    private mutating func string(_ value: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        let hex = Array("0123456789abcdef".utf8)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case 0x0a: buffer.writeStaticString("\\n")
            case 0x0d: buffer.writeStaticString("\\r")
            case 0x09: buffer.writeStaticString("\\t")
            case 0..<0x20:
                buffer.writeStaticString("\\u00")
                buffer.writeInteger(hex[Int(byte >> 4)])
                buffer.writeInteger(hex[Int(byte & 0x0f)])
            default: buffer.writeInteger(byte)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}
