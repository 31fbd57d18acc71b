import struct Foundation.Data

/// Lower-case hexadecimal encoding.
package enum Hex {
    package static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digit(byte >> 4))
            out.append(digit(byte & 0x0f))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex of either case; nil for odd length or a non-hex character.
    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = value(chars[index]), let low = value(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// The lower-case digit (ASCII) of a nibble, 0 to 15.
    package static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The value of a hex digit (ASCII) of either case; nil for anything else.
    static func value(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// base64url without padding (RFC 4648 §5), as JWTs and Web Push use it.
package enum Base64URL {
    package static func encode(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Decodes base64url or standard base64, padded or not.
    package static func decode(_ text: String) -> [UInt8]? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.utf8.count % 4 != 0 { standard.append("=") }
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
