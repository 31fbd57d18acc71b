import HTTPTypes

/// One push rendered for APNs: the payload and the header values Apple's HTTP/2 API takes.
package struct APNsNotification: Sendable, Equatable {
    /// The JSON payload.
    package var payload: [UInt8]
    /// `apns-push-type`.
    package var pushType: APNsPushType
    /// `apns-priority`: 10 sends at once, 5 lets the device batch (required for background pushes).
    package var priority: Int
    /// `apns-expiration`, epoch seconds; nil leaves it out.
    package var expiration: Int64?
    /// `apns-collapse-id`, at most 64 bytes.
    package var collapseID: String?

    /// The payload as text, for logs at `--log-sensitive` and for tests.
    package var payloadText: String { String(decoding: payload, as: UTF8.self) }
}

/// The `apns-push-type` header values Herald sends.
package enum APNsPushType: String, Sendable, Equatable {
    case alert
    case background
}

/// Renders the APNs payload of a push (Apple's "Generating a remote notification").
package enum APNsRenderer {
    /// Apple's limit on a notification payload.
    package static let maximumPayloadBytes = 4096
    /// The length of a receipt id, used to check a payload before its receipt exists.
    package static let receiptPlaceholder = String(repeating: "0", count: 36)

    /// The notification for iOS devices, or nil when the push has nothing for them
    /// (no `message.body` and no `custom.ios`).
    ///
    /// - Parameters:
    ///   - receiptID: put at the payload's root as `receiptId`, as the PCF SDKs read it; nil to leave out.
    ///   - badge: for a push with a relative badge (`"+1"`), the number this device shows.
    package static func render(_ push: Push, receiptID: String?, badge: Int64? = nil) throws(ValidationError) -> APNsNotification? {
        let ios = push.ios ?? [:]
        if push.body == nil && push.custom["ios"] == nil { return nil }
        func field(_ key: String) -> String { "message.custom.ios.\(key)" }
        func string(_ key: String) throws(ValidationError) -> String? {
            guard let value = ios[key], value != .null else { return nil }
            guard let text = value.stringValue else {
                throw ValidationError(code: "invalid_type", message: "must be a string", field: field(key))
            }
            return text
        }
        func flag(_ key: String) throws(ValidationError) -> Bool {
            switch ios[key] {
            case nil, .null?: return false
            case .bool(let value)?: return value
            case .int(let value)?: return value != 0
            default: throw ValidationError(code: "invalid_type", message: "must be a boolean", field: field(key))
            }
        }

        var aps: [String: JSONValue] = [:]

        // The alert: a string, or a dictionary; `title`/`subtitle` may also sit beside it.
        var alert: [String: JSONValue] = [:]
        var alertText: String?
        switch ios["alert"] {
        case nil, .null?:
            break
        case .string(let text)?:
            alertText = text
        case .object(let members)?:
            let allowed: Set<String> = [
                "title", "subtitle", "body", "launch-image", "title-loc-key", "title-loc-args", "subtitle-loc-key",
                "subtitle-loc-args", "loc-key", "loc-args", "action-loc-key", "action",
            ]
            for (key, value) in members where value != .null {
                guard allowed.contains(key) else {
                    throw ValidationError(message: "'\(key)' is not an APNs alert key", field: field("alert.\(key)"))
                }
                if key.hasSuffix("-args") {
                    guard case .array(let items) = value, items.allSatisfy({ $0.stringValue != nil }) else {
                        throw ValidationError(code: "invalid_type", message: "must be a list of strings", field: field("alert.\(key)"))
                    }
                } else if value.stringValue == nil {
                    throw ValidationError(code: "invalid_type", message: "must be a string", field: field("alert.\(key)"))
                }
                alert[key] = value
            }
        default:
            throw ValidationError(code: "invalid_type", message: "must be a string or an object", field: field("alert"))
        }
        if let title = try string("title") { alert["title"] = .string(title) }
        if let subtitle = try string("subtitle") { alert["subtitle"] = .string(subtitle) }
        if alert["body"] == nil, alert["loc-key"] == nil, let body = alertText ?? push.body {
            if alert.isEmpty {
                alertText = body
            } else {
                alert["body"] = .string(body)
            }
        }
        if !alert.isEmpty {
            aps["alert"] = .object(alert)
        } else if let alertText {
            aps["alert"] = .string(alertText)
        }

        // Read when the push was accepted (`Push.badge`); a relative change shows `badge`, the
        // device's new count, or the largest number when rendered for a check or a preview.
        switch push.badge {
        case nil: break
        case .set(let number)?: aps["badge"] = .int(number)
        case .add?: aps["badge"] = .int(badge ?? BadgeChange.limit)
        }
        switch ios["sound"] {
        case nil, .null?: break
        case .string(let sound)?: aps["sound"] = .string(sound)
        case .object(let sound)?: aps["sound"] = .object(sound)
        default:
            throw ValidationError(code: "invalid_type", message: "must be a sound name or a critical-sound object", field: field("sound"))
        }
        if let category = try string("category") { aps["category"] = .string(category) }
        if let thread = try string("thread-id") { aps["thread-id"] = .string(thread) }
        if let target = try string("target-content-id") { aps["target-content-id"] = .string(target) }
        let contentAvailable = try flag("content-available")
        if contentAvailable { aps["content-available"] = .int(1) }
        if try flag("mutable-content") { aps["mutable-content"] = .int(1) }
        if let level = try string("interruption-level") {
            guard ["passive", "active", "time-sensitive", "critical"].contains(level) else {
                throw ValidationError(message: "must be passive, active, time-sensitive or critical", field: field("interruption-level"))
            }
            aps["interruption-level"] = .string(level)
        }
        switch ios["relevance-score"] {
        case nil, .null?: break
        case .int(let score)? where (0...1).contains(score): aps["relevance-score"] = .int(score)
        case .double(let score)? where (0...1).contains(score): aps["relevance-score"] = .double(score)
        default: throw ValidationError(message: "must be a number from 0 to 1", field: field("relevance-score"))
        }

        var root: [String: JSONValue] = [:]
        switch ios["extra"] {
        case nil, .null?: break
        case .object(let extra)?:
            guard extra["aps"] == nil else {
                throw ValidationError(message: "extra cannot contain 'aps', which Herald builds", field: field("extra.aps"))
            }
            root = extra
        default:
            throw ValidationError(code: "invalid_type", message: "must be an object", field: field("extra"))
        }
        root["aps"] = .object(aps)
        if let receiptID { root["receiptId"] = .string(receiptID) }

        var collapseID = try string("collapse-id")
        if collapseID == nil { collapseID = try string("collapse_id") }
        if let collapseID, collapseID.utf8.count > 64 {
            throw ValidationError(message: "apns-collapse-id is at most 64 bytes", field: field("collapse-id"))
        }
        if let collapseID, !HTTPField.isValidValue(collapseID) {
            throw ValidationError(
                message: "apns-collapse-id must not hold control characters or start or end with a space",
                field: field("collapse-id"))
        }

        let visible = aps["alert"] != nil || aps["badge"] != nil || aps["sound"] != nil
        guard visible || contentAvailable else {
            throw ValidationError(
                code: "empty_notification",
                message: "an iOS push needs an alert (message.body or custom.ios.alert), a badge, a sound or content-available",
                field: "message.custom.ios")
        }

        let payload = Array(JSONValue.object(root).jsonText.utf8)
        guard payload.count <= maximumPayloadBytes else {
            throw ValidationError(
                code: "payload_too_large",
                message:
                    "the APNs payload would be \(payload.count) bytes, \(payload.count - maximumPayloadBytes) over Apple's \(maximumPayloadBytes)-byte limit",
                field: "message")
        }
        let background = contentAvailable && !visible
        return APNsNotification(
            payload: payload,
            pushType: background ? .background : .alert,
            priority: background ? 5 : 10,
            expiration: push.expiresAt.map { $0 / 1000 },
            collapseID: collapseID)
    }
}
