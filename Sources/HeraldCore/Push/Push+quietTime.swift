extension Push {
    /// `quiet_time` on a push, checked: `hold`, `silent` or `ignore`; absent or null is `ignore`.
    static func quietTimePolicy(_ value: JSONValue?) throws(ValidationError) -> QuietTimePolicy {
        switch value {
        case nil, .null?: return .ignore
        case .string(let text)?:
            guard let policy = QuietTimePolicy(rawValue: text) else {
                throw ValidationError(message: "'\(text)' is not hold, silent or ignore", field: "quiet_time")
            }
            return policy
        default:
            throw ValidationError(code: "invalid_type", message: "must be hold, silent or ignore", field: "quiet_time")
        }
    }

    /// The push as devices in their quiet time get it when the push says `"quiet_time": "silent"`:
    /// on iOS without `sound` and with `interruption-level: passive` (into the notification list,
    /// no banner, no sound), on Android as a data message only (`notification: false`). Web Push
    /// (`Urgency: very-low`) and WNS (`X-WNS-SuppressPopup`) change headers of their rendering
    /// instead (`WebPushNotification.silenced`, `WNSNotification.silenced`).
    package var silenced: Push {
        var push = self
        // A platform block is added only where the push already renders for that platform, so
        // that silencing never makes a push reach a kind of device it did not.
        if body != nil || custom["ios"] != nil {
            var ios = custom["ios"]?.objectValue ?? [:]
            ios["sound"] = nil
            ios["interruption-level"] = .string("passive")
            push.custom["ios"] = .object(ios)
        }
        if body != nil || custom["android"] != nil {
            var android = custom["android"]?.objectValue ?? [:]
            android["notification"] = .bool(false)
            push.custom["android"] = .object(android)
        }
        return push
    }
}

extension WebPushNotification {
    /// For a device in its quiet time (`"quiet_time": "silent"`): `Urgency: very-low`, which a
    /// user agent delivers only when the device is on power and Wi-Fi (RFC 8030 §5.3), the
    /// nearest Web Push has to "not now, quietly".
    package var silenced: WebPushNotification {
        var notification = self
        notification.urgency = .veryLow
        return notification
    }
}

extension WNSNotification {
    /// For a device in its quiet time (`"quiet_time": "silent"`): a toast gets
    /// `X-WNS-SuppressPopup: true`, which Windows documents as placing it "silently into the action
    /// center" without its popup: the nearest WNS has to iOS's passive interruption level (into
    /// the notification list, no banner, no sound). Tiles, badges and raw notifications neither
    /// pop up nor sound, and are sent as they are.
    package var silenced: WNSNotification {
        var notification = self
        if kind == .toast { notification.suppressPopup = true }
        return notification
    }
}
