/// `POST /v1/location_groups` and `PUT /v1/location_groups/:id` as received.
package struct LocationGroupInput: Sendable, Equatable, Decodable {
    package var name: String?
    package var description: String?
    /// Location ids, as numbers or strings of digits.
    package var locationIDs: [JSONValue]?

    enum CodingKeys: String, CodingKey {
        case name, description
        case locationIDs = "location_ids"
    }

    package init(name: String? = nil, description: String? = nil, locationIDs: [JSONValue]? = nil) {
        self.name = name
        self.description = description
        self.locationIDs = locationIDs
    }

    /// Checks the fields given; with `requireAll` (a create) the name is required, and an absent
    /// description or location list is empty.
    package func validated(requireAll: Bool) throws(ValidationError) -> LocationGroupChanges {
        var changes = LocationGroupChanges()
        if let name {
            changes.name = try name.checkedName(field: "name")
        } else if requireAll {
            throw ValidationError(code: "missing_field", message: "name is required", field: "name")
        }
        if let description {
            guard description.unicodeScalars.count <= Limits.descriptionLength else {
                throw ValidationError(message: "description is at most \(Limits.descriptionLength) characters", field: "description")
            }
            try description.requireStorable(field: "description")
            changes.description = description
        } else if requireAll {
            changes.description = ""
        }
        if let locationIDs {
            changes.locationIDs = try Self.ids(locationIDs, field: "location_ids")
        } else if requireAll {
            changes.locationIDs = []
        }
        return changes
    }

    /// Location ids from numbers or strings, without duplicates, in order.
    static func ids(_ values: [JSONValue], field: String) throws(ValidationError) -> [Int64] {
        guard values.count <= Limits.locationsPerGeofence else {
            throw ValidationError(
                code: "limit_exceeded", message: "at most \(Limits.locationsPerGeofence) locations, got \(values.count)", field: field)
        }
        var seen = Set<Int64>()
        var ids: [Int64] = []
        for (index, value) in values.enumerated() {
            guard let id = value.lenientInt, id > 0 else {
                throw ValidationError(
                    code: "invalid_type", message: "a location id is a positive whole number", field: "\(field)[\(index)]")
            }
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }
}
