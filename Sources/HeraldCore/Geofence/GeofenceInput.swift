/// `POST /v1/geofence` and `PUT /v1/geofence/:id` as received (the Pivotal API).
///
/// Location ids may be numbers or strings (the API's example sends `"locations":["1","2"]`);
/// times are epoch milliseconds, as numbers or strings of digits.
package struct GeofenceInput: Sendable, Equatable, Decodable {
    package var tags: [String]?
    package var locations: [JSONValue]?
    package var triggerType: String?
    package var startTime: JSONValue?
    package var expiryTime: JSONValue?
    package var platform: String?
    package var data: JSONValue?

    enum CodingKeys: String, CodingKey {
        case tags, locations, platform, data
        case triggerType = "trigger_type"
        case startTime = "start_time"
        case expiryTime = "expiry_time"
    }

    package init(
        tags: [String]? = nil, locations: [JSONValue]? = nil, triggerType: String? = nil, startTime: JSONValue? = nil,
        expiryTime: JSONValue? = nil, platform: String? = nil, data: JSONValue? = nil
    ) {
        self.tags = tags
        self.locations = locations
        self.triggerType = triggerType
        self.startTime = startTime
        self.expiryTime = expiryTime
        self.platform = platform
        self.data = data
    }

    /// Checks each field given; what depends on several fields (or on the stored geofence) is
    /// checked by `GeofenceChanges.definition(now:)` and `applied(to:now:)`.
    package func validated() throws(ValidationError) -> GeofenceChanges {
        var changes = GeofenceChanges()
        if let tags {
            let normalized = try RegistrationInput.normalizedTags(tags, field: "tags")
            for (index, tag) in normalized.enumerated() { try tag.requireStorable(field: "tags[\(index)]") }
            guard normalized.count <= Limits.tagsPerGeofence else {
                throw ValidationError(code: "limit_exceeded", message: "at most \(Limits.tagsPerGeofence) tags", field: "tags")
            }
            changes.tags = normalized
        }
        if let locations {
            changes.locationIDs = try LocationGroupInput.ids(locations, field: "locations")
        }
        if let triggerType {
            changes.triggerType = try GeofenceTrigger.parse(triggerType, field: "trigger_type")
        }
        if let platform {
            changes.platform = try GeofencePlatform.parse(platform, field: "platform")
        }
        changes.startTime = try Self.time(startTime, field: "start_time")
        changes.expiryTime = try Self.time(expiryTime, field: "expiry_time")
        switch data {
        case nil, .null?:
            break
        case .object(let members)?:
            for key in ["ios", "android", "androidFcm"] {
                if let value = members[key], value != .null, value.objectValue == nil {
                    throw ValidationError(code: "invalid_type", message: "data.\(key) must be an object", field: "data.\(key)")
                }
            }
            changes.data = members
        default:
            throw ValidationError(code: "invalid_type", message: "data must be an object", field: "data")
        }
        return changes
    }

    static func time(_ value: JSONValue?, field: String) throws(ValidationError) -> Int64? {
        guard let value, value != .null else { return nil }
        guard let time = value.lenientInt, time >= 0 else {
            throw ValidationError(
                code: "invalid_type", message: "\(field) is epoch milliseconds: a whole number of at least 0", field: field)
        }
        return time
    }
}
