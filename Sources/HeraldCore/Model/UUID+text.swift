import struct Foundation.UUID
import typealias Foundation.uuid_t

extension UUID {
    /// The canonical text form in lower case (`8-4-4-4-12` hex digits, RFC 9562 §4), the form
    /// Herald stores and answers with.
    ///
    /// Written here rather than as `uuidString.lowercased()`: Foundation formats through
    /// `sprintf` and then lower-cases a copy, which showed up in the registration profile.
    package var lowercasedString: String {
        String(unsafeUninitializedCapacity: 36) { text in writeLowercased(into: UnsafeMutableRawBufferPointer(text)) }
    }

    /// Writes `lowercasedString`'s 36 bytes at the start of `text` (which has room for them)
    /// and returns 36: for writers that put the text straight into a buffer (the APNs requests'
    /// `apns-id`).
    package func writeLowercased(into text: UnsafeMutableRawBufferPointer) -> Int {
        withUnsafeBytes(of: uuid) { bytes in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = Hex.digit(bytes[index] >> 4)
                text[position + 1] = Hex.digit(bytes[index] & 0x0f)
                position += 2
            }
            return position
        }
    }

    /// Parses the canonical text form, digits in either case; nil for anything else (the same
    /// forms `UUID(uuidString:)` accepts, without its `sscanf`).
    package init?(text: String) {
        var text = text
        let parsed = text.withUTF8 { utf8 -> uuid_t? in
            guard utf8.count == 36 else { return nil }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let valid = withUnsafeMutableBytes(of: &bytes) { output -> Bool in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard utf8[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                    }
                    guard let high = Hex.value(utf8[position]), let low = Hex.value(utf8[position + 1]) else { return false }
                    output[index] = high << 4 | low
                    position += 2
                }
                return true
            }
            return valid ? bytes : nil
        }
        guard let parsed else { return nil }
        self.init(uuid: parsed)
    }
}
