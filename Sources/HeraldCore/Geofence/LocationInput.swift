/// `POST /v1/locations` and `PUT /v1/locations/:id` as received.
///
/// `lat`, `long` and `rad` may be JSON numbers or strings holding numbers: the Pivotal API
/// documents the coordinates as strings (`"lat":"49.28"`) and the radius as a number.
package struct LocationInput: Sendable, Equatable, Decodable {
    package var name: String?
    package var lat: JSONValue?
    package var long: JSONValue?
    package var rad: JSONValue?

    package init(name: String? = nil, lat: JSONValue? = nil, long: JSONValue? = nil, rad: JSONValue? = nil) {
        self.name = name
        self.lat = lat
        self.long = long
        self.rad = rad
    }

    /// Checks the fields given; with `requireAll` (a create) every field must be given.
    package func validated(requireAll: Bool) throws(ValidationError) -> LocationChanges {
        var changes = LocationChanges()
        if let name {
            changes.name = try name.checkedName(field: "name")
        } else if requireAll {
            throw ValidationError(code: "missing_field", message: "name is required", field: "name")
        }
        changes.latitude = try Self.number(lat, field: "lat", in: -90...90, unit: "degrees of latitude", requireAll: requireAll)
        changes.longitude = try Self.number(long, field: "long", in: -180...180, unit: "degrees of longitude", requireAll: requireAll)
        changes.radius = try Self.number(rad, field: "rad", in: nil, unit: "metres", requireAll: requireAll)
        if let radius = changes.radius, radius <= 0 {
            throw ValidationError(message: "rad is the radius in metres and must be more than 0", field: "rad")
        }
        return changes
    }

    static func number(
        _ value: JSONValue?, field: String, in range: ClosedRange<Double>?, unit: String, requireAll: Bool
    ) throws(ValidationError) -> Double? {
        guard let value, value != .null else {
            if requireAll { throw ValidationError(code: "missing_field", message: "\(field) is required", field: field) }
            return nil
        }
        guard let number = value.lenientDouble else {
            throw ValidationError(code: "invalid_type", message: "\(field) must be a number or a string holding one", field: field)
        }
        if let range, !range.contains(number) {
            throw ValidationError(
                message: "\(field) must be from \(Int(range.lowerBound)) to \(Int(range.upperBound)) \(unit), not \(number)", field: field)
        }
        return number
    }
}
