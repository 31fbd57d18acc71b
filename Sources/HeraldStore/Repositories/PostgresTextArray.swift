/// A one-dimensional PostgreSQL array in its text form (`{"a","b",NULL}`, `{1,2}`), bound as one
/// text value and cast in the statement (`\(array.text)::text[]`, `::bigint[]`): a whole chunk's
/// column travels in one bind through the store's ordinary statements, whatever the chunk's
/// size, and PostgreSQL's `array_in` splits it. The device import writes its chunks so.
struct PostgresTextArray: Sendable {
    private var body: [UInt8] = [UInt8(ascii: "{")]

    init() {}

    init(_ values: some Sequence<String>) {
        for value in values { append(value) }
    }

    /// The array's text.
    var text: String {
        var bytes = body
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends a text element (NULL for nil), quoted: inside the quotes only `"` and `\`
    /// need a backslash.
    mutating func append(_ value: String?) {
        separate()
        guard let value else {
            body.append(contentsOf: "NULL".utf8)
            return
        }
        body.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { body.append(UInt8(ascii: "\\")) }
            body.append(byte)
        }
        body.append(UInt8(ascii: "\""))
    }

    /// Appends an integer element (for `::bigint[]`).
    mutating func append(integer value: Int64) {
        separate()
        body.append(contentsOf: String(value).utf8)
    }

    private mutating func separate() {
        if body.count > 1 { body.append(UInt8(ascii: ",")) }
    }
}
