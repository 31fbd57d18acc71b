import HeraldCore
import NIOHPACK

extension HPACKHeaders {
    /// Why the block breaks RFC 9113 §8.2 (field names and values, §8.2.2 connection-specific
    /// fields, §8.3 pseudo-header fields first), or nil when it does not. The provider
    /// connections check what they send when `validatesHeaderBlocks` is on.
    var fieldSyntaxViolation: String? {
        var regularSeen = false
        for (name, value, _) in self {
            let nameBytes = name.utf8
            guard !nameBytes.isEmpty else { return "an empty field name" }
            if nameBytes.first == UInt8(ascii: ":") {
                guard !regularSeen else { return "pseudo-header field \(name) after a regular field" }
                guard nameBytes.dropFirst().allSatisfy(Self.isNameByte) else { return "field name \(name)" }
            } else {
                regularSeen = true
                guard nameBytes.allSatisfy(Self.isNameByte) else { return "field name \(name)" }
                switch name {
                case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
                    return "connection-specific field \(name)"
                case "te" where value != "trailers":
                    return "te other than trailers"
                default:
                    break
                }
            }
            let valueBytes = value.utf8
            if valueBytes.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) {
                return "a line break or NUL in the value of \(name)"
            }
            if let first = valueBytes.first, let last = valueBytes.last, Self.isSpace(first) || Self.isSpace(last) {
                return "white space around the value of \(name)"
            }
        }
        return nil
    }

    /// A lowercase token character (RFC 9110 §5.6.2): HTTP/2 field names are lowercase (RFC 9113 §8.2.1).
    private static func isNameByte(_ byte: UInt8) -> Bool {
        HTTPToken.isTokenCharacter(byte) && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}
