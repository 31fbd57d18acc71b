import struct Foundation.UUID

// MARK: Reading and writing the JSON form

extension AudienceExpression {
    /// Reads and checks an expression; errors name the JSON path of the fault under `path`
    /// (`target.audience.and[1].not.topic`).
    ///
    /// Refused: a node that is not an object with exactly one member, an unknown member, an empty
    /// `and`/`or`, a `not` alone at the root (it would reach every device but a few: name what
    /// to reach), more than `Limits.audienceLeaves` leaves or `Limits.audienceDepth` levels, and a
    /// leaf whose value fails the rule its field follows elsewhere (topics as tags, platform types
    /// or uuids, custom user ids, device uuids, IANA time zones).
    package static func parse(_ json: JSONValue, path: String) throws(ValidationError) -> AudienceExpression {
        var leaves = 0
        let expression = try parse(json, path: path, level: 1, leaves: &leaves)
        if case .not = expression {
            throw ValidationError(
                code: "invalid_audience", message: "a 'not' alone would reach every device but those it names: combine it with 'and'",
                field: path + ".not")
        }
        return expression
    }

    private static func parse(_ json: JSONValue, path: String, level: Int, leaves: inout Int) throws(ValidationError) -> AudienceExpression
    {
        guard level <= Limits.audienceDepth else {
            throw ValidationError(
                code: "limit_exceeded", message: "an audience is at most \(Limits.audienceDepth) levels deep", field: path)
        }
        guard case .object(let members) = json, members.count == 1, let (key, value) = members.first else {
            throw ValidationError(
                code: "invalid_audience",
                message: "an audience node is an object with one member: \(AudienceLeaf.members)",
                field: path)
        }
        let here = path + "." + key
        switch key {
        case "and", "or":
            guard case .array(let items) = value else {
                throw ValidationError(code: "invalid_audience", message: "'\(key)' takes an array of audience nodes", field: here)
            }
            guard !items.isEmpty else {
                throw ValidationError(code: "invalid_audience", message: "'\(key)' needs at least one operand", field: here)
            }
            var operands: [AudienceExpression] = []
            operands.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                operands.append(try parse(item, path: "\(here)[\(index)]", level: level + 1, leaves: &leaves))
            }
            return key == "and" ? .and(operands) : .or(operands)
        case "not":
            return .not(try parse(value, path: here, level: level + 1, leaves: &leaves))
        default:
            leaves += 1
            guard leaves <= Limits.audienceLeaves else {
                throw ValidationError(
                    code: "limit_exceeded", message: "an audience has at most \(Limits.audienceLeaves) leaves", field: here)
            }
            return .leaf(try AudienceLeaf(key: key, value: value, field: here, node: path))
        }
    }

    /// The JSON form `parse` reads.
    package var json: JSONValue {
        switch self {
        case .and(let operands): .object(["and": .array(operands.map(\.json))])
        case .or(let operands): .object(["or": .array(operands.map(\.json))])
        case .not(let operand): .object(["not": operand.json])
        case .leaf(let leaf): .object([leaf.key: .string(leaf.value)])
        }
    }
}

extension AudienceExpression: Codable {
    package init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        let path = decoder.codingPath.map(\.stringValue).joined(separator: ".")
        do {
            self = try Self.parse(json, path: path.isEmpty ? "audience" : path)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

extension AudienceLeaf {
    /// Checks one leaf: `key` its member name, `field` the path of its value, `node` the path
    /// of the object holding it.
    init(key: String, value: JSONValue, field: String, node: String) throws(ValidationError) {
        guard case .string(let text) = value else {
            if Self.keys.contains(key) {
                throw ValidationError(code: "invalid_audience", message: "'\(key)' takes a string", field: field)
            }
            throw Self.unknown(key, node: node)
        }
        switch key {
        case "topic":
            self = .topic(try RegistrationInput.normalizedTag(text, field: field))
        case "platform":
            if let id = UUID(text: text) {
                self = .platform(id)
            } else {
                self = .platformType(try PlatformType.parse(text, field: field))
            }
        case "custom_user_id":
            try PushInput.checkCustomUserID(text, field: field)
            self = .customUserID(text)
        case "device":
            guard let id = UUID(text: text) else { throw ValidationError(message: "'\(text)' is not a device uuid", field: field) }
            self = .device(id)
        case "time_zone":
            guard PushSchedule.isTimeZone(text) else {
                throw ValidationError(message: "'\(text)' is not an IANA time zone", field: field)
            }
            self = .timeZone(text)
        case "os":
            try text.requireStorable(field: field)
            guard !text.isEmpty, text.unicodeScalars.count <= Limits.deviceFieldLength else {
                throw ValidationError(message: "an os has 1 to \(Limits.deviceFieldLength) characters", field: field)
            }
            self = .os(text.lowercased())
        default:
            throw Self.unknown(key, node: node)
        }
    }

    /// The member names of leaves.
    static let keys = ["topic", "platform", "custom_user_id", "device", "time_zone", "os"]
    /// Every member an audience node may have, for messages.
    static let members = "and, or, not, topic, platform, custom_user_id, device, time_zone or os"

    private static func unknown(_ key: String, node: String) -> ValidationError {
        ValidationError(code: "invalid_audience", message: "unknown audience member '\(key)': use \(members)", field: node + "." + key)
    }
}
