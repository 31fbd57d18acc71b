import HeraldCore

import struct Foundation.Date
import class Foundation.ISO8601DateFormatter
import struct Foundation.UUID

/// One line of an application's activity log: what an operator watching the app sees happen.
///
/// Events carry counts and reasons, never device tokens or message bodies.
package struct ActivityEvent: Sendable, Equatable, Codable {
    package enum Kind: String, Sendable, Codable {
        /// The API accepted a push (it is queued).
        case pushAccepted = "push_accepted"
        /// A batch went to a provider; `counts` has what came of it.
        case batchSent = "batch_sent"
        /// Notifications failed for good; `counts` has them by reason.
        case failure
        /// A platform's credentials are missing or were refused: its sends are held or paused.
        case credentialsProblem = "credentials_problem"
        /// A provider could not be reached (TLS, DNS, a refused connection, the proxy): `message`
        /// has the cause; the devices are retried while the push's retry window runs.
        case providerUnreachable = "provider_unreachable"
    }

    /// Epoch milliseconds.
    package var time: Int64
    package var kind: Kind
    package var pushID: UUID?
    package var platformID: UUID?
    /// `apns`, `fcm`, `webpush` or `wns`, when one provider is concerned.
    package var provider: String?
    /// Devices by outcome or failure reason.
    package var counts: [String: Int]
    /// A short human sentence.
    package var message: String

    package init(
        time: Int64, kind: Kind, pushID: UUID? = nil, platformID: UUID? = nil, provider: String? = nil, counts: [String: Int] = [:],
        message: String
    ) {
        self.time = time
        self.kind = kind
        self.pushID = pushID
        self.platformID = platformID
        self.provider = provider
        self.counts = counts
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case time, kind
        case pushID = "push_id"
        case platformID = "platform_id"
        case provider, counts, message
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(time, forKey: .time)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(pushID?.lowercasedString, forKey: .pushID)
        try container.encodeIfPresent(platformID?.lowercasedString, forKey: .platformID)
        try container.encodeIfPresent(provider, forKey: .provider)
        try container.encode(counts, forKey: .counts)
        try container.encode(message, forKey: .message)
    }

    /// One line of the plain-text log: time, kind, message, then the ids and counts as `key=value`.
    package var line: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var parts = [formatter.string(from: Date(timeIntervalSince1970: Double(time) / 1000)), kind.rawValue, message]
        if let pushID { parts.append("push=\(pushID.lowercasedString)") }
        if let platformID { parts.append("platform=\(platformID.lowercasedString)") }
        if let provider { parts.append("provider=\(provider)") }
        for (key, value) in counts.sorted(by: { $0.key < $1.key }) { parts.append("\(key)=\(value)") }
        return parts.joined(separator: " ")
    }
}
