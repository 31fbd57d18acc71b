import Crypto

/// Renders the Web Push message of a push: the notification JSON a service worker shows, and
/// the RFC 8030 headers.
///
/// The JSON is `{"title":…, "body":…, …}`: `body` is `message.body`, and every key of
/// `custom.web` is copied beside it (a `custom.web.body` replaces `message.body`), except the
/// keys Herald reads itself:
/// - `urgency`: `very-low`, `low`, `normal` (the default) or `high`;
/// - `collapse_key`: becomes the `Topic`, so a newer message replaces one still waiting.
/// `receiptId` is added at the root, as for the other platforms.
package enum WebPushRenderer {
    /// Push services need not accept a body over 4096 bytes (RFC 8030 §7.2); most refuse one.
    package static let maximumEncryptedBytes = 4096
    /// What encryption adds (RFC 8291 §4): the aes128gcm header (86 bytes), the padding
    /// delimiter (1) and the AES-GCM tag (16).
    package static let encryptionOverhead = 103
    /// The largest notification JSON that fits: 3993 bytes.
    package static let maximumPayloadBytes = maximumEncryptedBytes - encryptionOverhead
    /// `TTL` when the push has no `expiryTime`, and the most Herald asks for: four weeks, as
    /// the push services keep messages no longer.
    package static let maximumTTL: Int64 = 28 * 86_400
    /// `Topic` is at most this many base64url characters (RFC 8030 §5.4).
    package static let maximumTopicLength = 32

    /// The message for web devices, or nil when the push has nothing for them (no
    /// `message.body` and no `custom.web`).
    ///
    /// - Parameters:
    ///   - receiptID: put at the root as `receiptId`; nil to leave out.
    ///   - now: epoch milliseconds, to turn `expiryTime` into a `TTL`.
    package static func render(_ push: Push, receiptID: String?, now: Int64) throws(ValidationError) -> WebPushNotification? {
        let custom: [String: JSONValue]
        switch push.custom["web"] {
        case nil:
            guard push.body != nil else { return nil }
            custom = [:]
        case .object(let members)?:
            custom = members
        default:
            throw ValidationError(code: "invalid_type", message: "must be an object", field: "message.custom.web")
        }
        func field(_ key: String) -> String { "message.custom.web.\(key)" }

        var root: [String: JSONValue] = [:]
        if let body = push.body { root["body"] = .string(body) }
        for (key, value) in custom where key != "urgency" && key != "collapse_key" {
            root[key] = value
        }
        for key in ["title", "body"] {
            if let value = root[key], value != .null, value.stringValue == nil {
                throw ValidationError(code: "invalid_type", message: "must be a string", field: field(key))
            }
        }
        if let receiptID { root["receiptId"] = .string(receiptID) }

        var urgency = WebPushUrgency.normal
        switch custom["urgency"] {
        case nil, .null?:
            break
        case .string(let text)?:
            guard let parsed = WebPushUrgency(rawValue: text) else {
                throw ValidationError(message: "must be very-low, low, normal or high", field: field("urgency"))
            }
            urgency = parsed
        default:
            throw ValidationError(code: "invalid_type", message: "must be very-low, low, normal or high", field: field("urgency"))
        }

        var topic: String?
        switch custom["collapse_key"] {
        case nil, .null?:
            break
        case .string(let key)? where !key.isEmpty:
            topic = Self.topic(forCollapseKey: key)
        default:
            throw ValidationError(code: "invalid_type", message: "must be a non-empty string", field: field("collapse_key"))
        }

        let payload = Array(JSONValue.object(root).jsonText.utf8)
        guard payload.count <= maximumPayloadBytes else {
            let encrypted = payload.count + encryptionOverhead
            throw ValidationError(
                code: "payload_too_large",
                message:
                    "the Web Push message would be \(encrypted) bytes encrypted, \(encrypted - maximumEncryptedBytes) over the \(maximumEncryptedBytes)-byte limit of push services",
                field: "message")
        }

        var ttl = maximumTTL
        if let expiresAt = push.expiresAt {
            // Whole seconds left, rounded up; nothing left means deliver only to a connected user agent.
            ttl = min(maximumTTL, max(0, (expiresAt - now + 999) / 1000))
        }
        return WebPushNotification(payload: payload, ttl: ttl, urgency: urgency, topic: topic)
    }

    /// The `Topic` for a collapse key: the key itself when it is already at most 32 base64url
    /// characters, otherwise the first 32 characters of its SHA-256 in base64url, so that the
    /// same key always gives the same topic.
    package static func topic(forCollapseKey key: String) -> String {
        let base64URL = key.utf8.allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        if base64URL && key.utf8.count <= maximumTopicLength { return key }
        return String(Base64URL.encode(Array(SHA256.hash(data: Array(key.utf8)))).prefix(maximumTopicLength))
    }
}
