/// Renders the FCM HTTP v1 message of a push for Android devices.
///
/// - `message.body` becomes `data.message` (where the PCF Android SDK reads the text). By default
///   the message is a data message only, as Pivotal sent them: it reaches the app's messaging
///   service (the PCF SDK's `FcmMessagingService`) in the foreground and in the background, which
///   reports it received and hands it to the app. A platform with `fcm_notification` adds a
///   `notification` block with the body (Android then shows it by itself while the app is in the
///   background, and the SDK never sees it); `custom.android.notification` decides per push:
///   `true` adds it, `false` leaves it out, an object shapes it.
/// - Every other key of `custom.android` becomes a `data` value, as a string (numbers and
///   booleans as their JSON text, objects and arrays JSON-encoded); a null value leaves the key
///   out. `custom.android` wins over `message.body` for `data.message`.
/// - `collapse_key` and `priority` (`normal`/`high`) become Android options, not data;
///   `notification` may be an object with `title`, `body`, `image` and the Android display keys
///   (`icon`, `color`, `sound`, `tag`, `click_action`, `channel_id`).
/// - `expiryTime` becomes `android.ttl`, the seconds left (at most FCM's four weeks).
/// - `receiptId` goes into `data`.
package enum FCMRenderer {
    /// Google's limit on the data payload: keys and values, in bytes.
    package static let maximumDataBytes = 4096
    /// The longest `ttl` FCM accepts: four weeks, in seconds.
    package static let maximumTTLSeconds: Int64 = 28 * 24 * 3600
    /// The length of a receipt id, used to check a payload before its receipt exists.
    package static let receiptPlaceholder = APNsRenderer.receiptPlaceholder

    /// Android display keys that go into `android.notification`.
    static let androidNotificationKeys: Set<String> = ["icon", "color", "sound", "tag", "click_action", "channel_id"]

    /// The message for Android devices, or nil when the push has nothing for them (no
    /// `message.body` and no `custom.android`).
    ///
    /// - Parameters:
    ///   - receiptID: put into `data` as `receiptId`, as the PCF SDK reads it; nil to leave out.
    ///   - now: epoch milliseconds, to turn `expiryTime` into a time to live.
    ///   - notificationByDefault: the platform's `fcm_notification`: whether a push that does not say
    ///     (`custom.android.notification`) gets a notification block with its body.
    package static func render(
        _ push: Push, receiptID: String?, now: Int64, notificationByDefault: Bool = false
    ) throws(ValidationError) -> FCMMessage? {
        if push.body == nil && push.custom["android"] == nil { return nil }
        let custom = push.custom["android"]?.objectValue ?? [:]
        func field(_ key: String) -> String { "message.custom.android.\(key)" }
        func string(_ key: String) throws(ValidationError) -> String? {
            guard let value = custom[key], value != .null else { return nil }
            guard let text = value.stringValue else {
                throw ValidationError(code: "invalid_type", message: "must be a string", field: field(key))
            }
            return text
        }

        var data: [String: String] = [:]
        if let body = push.body { data["message"] = body }
        for (key, value) in custom {
            switch key {
            case "collapse_key", "priority", "notification":
                continue
            case "receiptId":
                throw ValidationError(message: "receiptId is Herald's: it is set to the push's receipt id", field: field(key))
            default:
                break
            }
            let lower = key.lowercased()
            if key.isEmpty || lower == "from" || lower == "message_type" || lower.hasPrefix("google") || lower.hasPrefix("gcm") {
                throw ValidationError(
                    message: "'\(key)' is reserved by FCM (from, message_type, and keys starting with google or gcm)",
                    field: field(key))
            }
            switch value {
            case .null: data[key] = nil
            case .string(let text): data[key] = text
            case .bool, .int, .double, .array, .object: data[key] = value.jsonText
            }
        }
        if let receiptID { data["receiptId"] = receiptID }

        var android = FCMMessage.AndroidConfig()
        android.collapseKey = try string("collapse_key")
        if let priority = try string("priority") {
            guard let parsed = FCMMessage.Priority(rawValue: priority.lowercased()) else {
                throw ValidationError(message: "must be normal or high", field: field("priority"))
            }
            android.priority = parsed
        }
        if let expiresAt = push.expiresAt {
            android.ttlSeconds = min(max(0, (expiresAt - now) / 1000), maximumTTLSeconds)
        }

        var notification: FCMMessage.Notification? = push.body.map { FCMMessage.Notification(body: $0) }
        switch custom["notification"] {
        case nil, .null?:
            if !notificationByDefault { notification = nil }
        case .bool(true)?:
            break
        case .bool(false)?:
            notification = nil
        case .object(let members)?:
            var shown = FCMMessage.Notification(body: push.body)
            for (key, value) in members where value != .null {
                guard let text = value.stringValue else {
                    throw ValidationError(code: "invalid_type", message: "must be a string", field: field("notification.\(key)"))
                }
                switch key {
                case "title": shown.title = text
                case "body": shown.body = text
                case "image": shown.image = text
                case _ where androidNotificationKeys.contains(key):
                    if key == "color", !isColor(text) {
                        throw ValidationError(message: "must be a #rrggbb colour", field: field("notification.color"))
                    }
                    android.notification[key] = text
                default:
                    throw ValidationError(
                        message:
                            "'\(key)' is not an FCM notification key (title, body, image, \(androidNotificationKeys.sorted().joined(separator: ", ")))",
                        field: field("notification.\(key)"))
                }
            }
            notification = shown.title == nil && shown.body == nil && shown.image == nil ? nil : shown
        default:
            throw ValidationError(code: "invalid_type", message: "must be false (data only) or an object", field: field("notification"))
        }

        if notification == nil && data.keys.allSatisfy({ $0 == "receiptId" }) {
            throw ValidationError(
                code: "empty_notification",
                message: "an Android push needs message.body, data keys in custom.android, or a custom.android.notification",
                field: "message.custom.android")
        }
        let message = FCMMessage(data: data, notification: notification, android: android)
        let size = message.dataPayloadBytes
        guard size <= maximumDataBytes else {
            throw ValidationError(
                code: "payload_too_large",
                message:
                    "the FCM data payload (keys and values) would be \(size) bytes, \(size - maximumDataBytes) over Google's \(maximumDataBytes)-byte limit",
                field: "message")
        }
        return message
    }

    private static func isColor(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 7, bytes[0] == UInt8(ascii: "#") else { return false }
        return bytes.dropFirst().allSatisfy { (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }
    }
}
