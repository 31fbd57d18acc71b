import struct Foundation.UUID

/// The stored form of a validated push (inside `AcceptedPush`). Keys are spelled out so that
/// renaming a property cannot change what is stored; `validateOnly` is not kept (such a push is
/// never stored).
extension Push: Codable {
    enum CodingKeys: String, CodingKey {
        case body, custom, audience
        case audienceExpression = "audience_expression"
        case expiresAt = "expires_at"
        case scheduledAt = "scheduled_at"
        case localTime = "local_time"
        case ratePerSecond = "rate_per_second"
        case badge
        case quietTime = "quiet_time"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            body: try container.decodeIfPresent(String.self, forKey: .body),
            custom: try container.decodeIfPresent([String: JSONValue].self, forKey: .custom) ?? [:],
            audience: try container.decode(Audience.self, forKey: .audience),
            audienceExpression: try container.decodeIfPresent(AudienceExpression.self, forKey: .audienceExpression),
            expiresAt: try container.decodeIfPresent(Int64.self, forKey: .expiresAt),
            scheduledAt: try container.decodeIfPresent(Int64.self, forKey: .scheduledAt),
            validateOnly: false,
            localTime: try container.decodeIfPresent(LocalDateTime.self, forKey: .localTime),
            ratePerSecond: try container.decodeIfPresent(Int.self, forKey: .ratePerSecond))
        // A push stored before the badge was kept typed had only numbers, in `custom.ios.badge`.
        badge = try container.decodeIfPresent(BadgeChange.self, forKey: .badge) ?? (try? Push.badgeChange(in: custom))
        quietTime = try container.decodeIfPresent(QuietTimePolicy.self, forKey: .quietTime) ?? .ignore
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(body, forKey: .body)
        if !custom.isEmpty { try container.encode(custom, forKey: .custom) }
        try container.encode(audience, forKey: .audience)
        try container.encodeIfPresent(audienceExpression, forKey: .audienceExpression)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(scheduledAt, forKey: .scheduledAt)
        try container.encodeIfPresent(localTime, forKey: .localTime)
        try container.encodeIfPresent(ratePerSecond, forKey: .ratePerSecond)
        try container.encodeIfPresent(badge, forKey: .badge)
        // Left out when it is the default, so that an ordinary push is stored as before.
        if quietTime != .ignore { try container.encode(quietTime, forKey: .quietTime) }
    }
}

/// `{"devices": [uuid, …]}`, or `{"platforms": […], "topics": […], "custom_user_ids": […],
/// "interactive_only": bool}` for a selection (no `platforms`: every platform).
extension Audience: Codable {
    enum CodingKeys: String, CodingKey {
        case devices, platforms, topics
        case customUserIDs = "custom_user_ids"
        case interactiveOnly = "interactive_only"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let devices = try container.decodeIfPresent([UUID].self, forKey: .devices) {
            self = .devices(devices)
            return
        }
        self = .selection(
            platforms: try container.decodeIfPresent([PlatformType].self, forKey: .platforms).map(Set.init),
            topics: try container.decodeIfPresent([String].self, forKey: .topics) ?? [],
            customUserIDs: try container.decodeIfPresent([String].self, forKey: .customUserIDs) ?? [],
            interactiveOnly: try container.decodeIfPresent(Bool.self, forKey: .interactiveOnly) ?? false)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .devices(let ids):
            try container.encode(ids, forKey: .devices)
        case .selection(let platforms, let topics, let customUserIDs, let interactiveOnly):
            // Sorted, so that the same push is always the same text.
            try container.encodeIfPresent(platforms.map { $0.sorted { $0.rawValue < $1.rawValue } }, forKey: .platforms)
            try container.encode(topics, forKey: .topics)
            try container.encode(customUserIDs, forKey: .customUserIDs)
            try container.encode(interactiveOnly, forKey: .interactiveOnly)
        }
    }
}

/// As its text, `2026-12-24T09:00:00`.
extension LocalDateTime: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = LocalDateTime(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a local date and time")
        }
        self = value
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
