/// A location's fields after validation: all of them for a create, those given for an update.
package struct LocationChanges: Sendable, Equatable {
    package var name: String?
    package var latitude: Double?
    package var longitude: Double?
    package var radius: Double?

    package init(name: String? = nil, latitude: Double? = nil, longitude: Double? = nil, radius: Double? = nil) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
    }

    /// `location` with these changes applied.
    package func applied(to location: Location) -> Location {
        var changed = location
        changed.name = name ?? location.name
        changed.latitude = latitude ?? location.latitude
        changed.longitude = longitude ?? location.longitude
        changed.radius = radius ?? location.radius
        return changed
    }

    /// Whether the change moves the circle (and so changes the geofences that use it).
    package func movesCircle(of location: Location) -> Bool {
        (latitude.map { $0 != location.latitude } ?? false) || (longitude.map { $0 != location.longitude } ?? false)
            || (radius.map { $0 != location.radius } ?? false) || (name.map { $0 != location.name } ?? false)
    }
}
