extension Push {
    /// `message.custom.ios.badge` as a change; nil when it is absent or null.
    static func badgeChange(in custom: [String: JSONValue]) throws(ValidationError) -> BadgeChange? {
        guard let value = custom["ios"]?.objectValue?["badge"], value != .null else { return nil }
        return try BadgeChange(value, field: "message.custom.ios.badge")
    }

    /// The change to each device's count this push makes, if it is relative (`"+N"`, `"-N"`,
    /// `"auto"`): such a push is rendered per badge number (`RenderedPush`).
    package var badgeDelta: Int64? {
        if case .add(let delta)? = badge { return delta }
        return nil
    }
}

/// Stored as it is written in a request: a number, or `"+N"` / `"-N"`.
extension BadgeChange: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        do {
            self = try BadgeChange(try container.decode(JSONValue.self), field: "badge")
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .set(let value): try container.encode(value)
        case .add(let delta): try container.encode(delta < 0 ? "\(delta)" : "+\(delta)")
        }
    }
}
