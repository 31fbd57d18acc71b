import HeraldCore
import HTTPTypes
import struct Foundation.Data

/// The credentials a request carries in its `Authorization` header.
enum RequestCredentials {
    /// HTTP Basic `username:password`.
    ///
    /// Parsed leniently on purpose: the PCF SDKs send `Basic` followed by two spaces, and
    /// some clients lower-case the scheme.
    static func basic(_ headers: HTTPFields) -> (username: String, password: String)? {
        guard let value = headers[.authorization] else { return nil }
        let parts = value.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: String(parts[1])),
            let text = String(validating: decoded, as: UTF8.self),
            let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    /// A bearer token.
    static func bearer(_ headers: HTTPFields) -> String? {
        guard let value = headers[.authorization] else { return nil }
        let parts = value.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1])
    }
}
