/// A geofence's fields after validation: those the request gave.
package struct GeofenceChanges: Sendable, Equatable {
    package var platform: GeofencePlatform?
    package var triggerType: GeofenceTrigger?
    package var startTime: Int64?
    package var expiryTime: Int64?
    package var data: [String: JSONValue]?
    package var tags: [String]?
    package var locationIDs: [Int64]?

    package init(
        platform: GeofencePlatform? = nil, triggerType: GeofenceTrigger? = nil, startTime: Int64? = nil, expiryTime: Int64? = nil,
        data: [String: JSONValue]? = nil, tags: [String]? = nil, locationIDs: [Int64]? = nil
    ) {
        self.platform = platform
        self.triggerType = triggerType
        self.startTime = startTime
        self.expiryTime = expiryTime
        self.data = data
        self.tags = tags
        self.locationIDs = locationIDs
    }

    /// The definition of a new geofence: `locations`, `trigger_type`, `expiry_time`, `platform`
    /// and `data` are required; `start_time` defaults to 0 (active at once), `tags` to none.
    package func definition(now: Int64) throws(ValidationError) -> GeofenceDefinition {
        func missing(_ field: String) -> ValidationError {
            ValidationError(code: "missing_field", message: "\(field) is required", field: field)
        }
        guard let locationIDs else { throw missing("locations") }
        guard let triggerType else { throw missing("trigger_type") }
        guard let expiryTime else { throw missing("expiry_time") }
        guard let platform else { throw missing("platform") }
        guard let data else { throw missing("data") }
        let definition = GeofenceDefinition(
            platform: platform, triggerType: triggerType, startTime: startTime ?? 0, expiryTime: expiryTime, data: data,
            tags: tags ?? [], locationIDs: locationIDs)
        try definition.validate(now: now, expiryChanged: true)
        return definition
    }

    /// `definition` with these changes applied, checked again.
    package func applied(to definition: GeofenceDefinition, now: Int64) throws(ValidationError) -> GeofenceDefinition {
        var changed = definition
        changed.platform = platform ?? definition.platform
        changed.triggerType = triggerType ?? definition.triggerType
        changed.startTime = startTime ?? definition.startTime
        changed.expiryTime = expiryTime ?? definition.expiryTime
        changed.data = data ?? definition.data
        changed.tags = tags ?? definition.tags
        changed.locationIDs = locationIDs ?? definition.locationIDs
        try changed.validate(now: now, expiryChanged: expiryTime != nil && expiryTime != definition.expiryTime)
        return changed
    }
}
