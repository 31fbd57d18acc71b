/// One push rendered for FCM's HTTP v1 API: the `message` object of `messages:send`, without
/// its target (the client adds each device's `token`). Built by `FCMRenderer`; encoded once.
package struct FCMMessage: Sendable, Equatable {
    /// `message.notification`: what the system shows while the app is in the background.
    package struct Notification: Sendable, Equatable {
        package var title: String?
        package var body: String?
        package var image: String?

        package init(title: String? = nil, body: String? = nil, image: String? = nil) {
            self.title = title
            self.body = body
            self.image = image
        }
    }

    /// `message.android.priority`.
    package enum Priority: String, Sendable, Equatable {
        case normal
        case high
    }

    /// `message.android`: the Android-only options.
    package struct AndroidConfig: Sendable, Equatable {
        /// `collapse_key`: a newer message with the same key replaces an undelivered one.
        package var collapseKey: String?
        package var priority: Priority?
        /// How long FCM keeps the message for an offline device, in whole seconds (`ttl`, sent as "3600s").
        package var ttlSeconds: Int64?
        /// `android.notification` fields (`icon`, `color`, `sound`, `tag`, `click_action`, `channel_id`).
        package var notification: [String: String]

        package init(collapseKey: String? = nil, priority: Priority? = nil, ttlSeconds: Int64? = nil, notification: [String: String] = [:])
        {
            self.collapseKey = collapseKey
            self.priority = priority
            self.ttlSeconds = ttlSeconds
            self.notification = notification
        }

        /// `ttl` as the protobuf duration string FCM expects ("3600s").
        package var ttl: String? { ttlSeconds.map { "\($0)s" } }

        var isEmpty: Bool { collapseKey == nil && priority == nil && ttlSeconds == nil && notification.isEmpty }
    }

    /// `message.data`: every value a string, as the app's messaging service receives them.
    package let data: [String: String]
    /// Nil for a data-only message (the app handles it even in the background).
    package let notification: Notification?
    package let android: AndroidConfig
    /// The `message` object without a target, as JSON text (keys sorted).
    package let jsonText: String

    package init(data: [String: String], notification: Notification? = nil, android: AndroidConfig = AndroidConfig()) {
        self.data = data
        self.notification = notification
        self.android = android
        self.jsonText = Self.json(data: data, notification: notification, android: android).jsonText
    }

    /// What FCM counts against its 4096-byte limit: the data keys and values, in UTF-8 bytes.
    package var dataPayloadBytes: Int {
        data.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }

    private static func json(data: [String: String], notification: Notification?, android: AndroidConfig) -> JSONValue {
        var message: [String: JSONValue] = [:]
        if !data.isEmpty {
            message["data"] = .object(data.mapValues { .string($0) })
        }
        if let notification {
            var fields: [String: JSONValue] = [:]
            if let title = notification.title { fields["title"] = .string(title) }
            if let body = notification.body { fields["body"] = .string(body) }
            if let image = notification.image { fields["image"] = .string(image) }
            message["notification"] = .object(fields)
        }
        if !android.isEmpty {
            var fields: [String: JSONValue] = [:]
            if let collapseKey = android.collapseKey { fields["collapse_key"] = .string(collapseKey) }
            if let priority = android.priority { fields["priority"] = .string(priority.rawValue) }
            if let ttl = android.ttl { fields["ttl"] = .string(ttl) }
            if !android.notification.isEmpty { fields["notification"] = .object(android.notification.mapValues { .string($0) }) }
            message["android"] = .object(fields)
        }
        return .object(message)
    }
}
