/// One push rendered for Web Push: the plaintext a service worker reads, and the RFC 8030
/// header values that go with it. Encryption happens per subscription, when it is sent.
package struct WebPushNotification: Sendable, Equatable {
    /// The notification JSON, before encryption.
    package var payload: [UInt8]
    /// `TTL`: seconds the push service keeps the message for a user agent that is offline.
    package var ttl: Int64
    /// `Urgency`.
    package var urgency: WebPushUrgency
    /// `Topic`: a newer message with the same topic replaces one still waiting (at most 32
    /// base64url characters); nil leaves it out.
    package var topic: String?

    package init(payload: [UInt8], ttl: Int64, urgency: WebPushUrgency = .normal, topic: String? = nil) {
        self.payload = payload
        self.ttl = ttl
        self.urgency = urgency
        self.topic = topic
    }

    /// The payload as text, for logs at `--log-sensitive` and for tests.
    package var payloadText: String { String(decoding: payload, as: UTF8.self) }
}

/// The `Urgency` header values of RFC 8030 §5.3.
package enum WebPushUrgency: String, Sendable, Equatable, CaseIterable {
    case veryLow = "very-low"
    case low
    case normal
    case high
}
