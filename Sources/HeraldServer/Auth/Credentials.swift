import HTTPTypes
import HeraldCore

import struct Foundation.Data

/// The credentials a request carries in its `Authorization` header.
enum RequestCredentials {
    /// HTTP Basic `username:password`.
    ///
    /// Parsed leniently on purpose: the PCF SDKs send `Basic` followed by two spaces, and
    /// some clients lower-case the scheme.
    static func basic(_ headers: HTTPFields) -> (username: String, password: String)? {
        guard let value = authorization(headers), let encoded = token(of: value, scheme: "basic"),
            let decoded = Data(base64Encoded: encoded)
        else { return nil }
        // Every device request carries these: split on the bytes, not on Characters.
        guard let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        guard let username = String(validating: decoded[..<colon], as: UTF8.self),
            let password = String(validating: decoded[(colon + 1)...], as: UTF8.self)
        else { return nil }
        return (username, password)
    }

    /// A bearer token.
    static func bearer(_ headers: HTTPFields) -> String? {
        guard let value = authorization(headers) else { return nil }
        return token(of: value, scheme: "bearer")
    }

    /// The one `Authorization` header's value; nil when there is none or more than one (their
    /// values joined would not be two words either). A plain scan: `HTTPFields`' subscript
    /// builds its name index and joins the values, which showed in registration profiles.
    static func authorization(_ headers: HTTPFields) -> String? {
        var value: String?
        for field in headers where field.name == .authorization {
            guard value == nil else { return nil }
            value = field.value
        }
        return value
    }

    /// The second of exactly two words separated by spaces or tabs, when the first is `scheme`
    /// (given in lower case; matched in any case).
    static func token(of value: String, scheme: StaticString) -> String? {
        let bytes = value.utf8
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let schemeStart = bytes.firstIndex(where: { !isBlank($0) }) else { return nil }
        let schemeEnd = bytes[schemeStart...].firstIndex(where: isBlank) ?? bytes.endIndex
        guard let tokenStart = bytes[schemeEnd...].firstIndex(where: { !isBlank($0) }) else { return nil }
        let tokenEnd = bytes[tokenStart...].firstIndex(where: isBlank) ?? bytes.endIndex
        // Nothing but blanks may follow the token.
        guard bytes[tokenEnd...].allSatisfy(isBlank) else { return nil }
        let name = bytes[schemeStart..<schemeEnd]
        let matches = scheme.withUTF8Buffer { expected in
            name.count == expected.count
                && zip(name, expected).allSatisfy { byte, lower in
                    // ASCII letters compare case-insensitively; anything else exactly.
                    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == lower : byte == lower
                }
        }
        guard matches else { return nil }
        return String(value[tokenStart..<tokenEnd])
    }
}
