import struct Foundation.UUID

/// A place on the map that geofences watch: a circle around a point, owned by one application.
package struct Location: Sendable, Equatable {
    /// Increasing per installation; the id the Pivotal API shows and geofences refer to.
    package var id: Int64
    package var applicationID: UUID
    package var name: String
    /// Degrees, -90…90.
    package var latitude: Double
    /// Degrees, -180…180.
    package var longitude: Double
    /// Metres, more than 0.
    package var radius: Double
    /// Milliseconds since 1970.
    package var createdAt: Int64
    package var updatedAt: Int64

    package init(
        id: Int64, applicationID: UUID, name: String, latitude: Double, longitude: Double, radius: Double,
        createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.applicationID = applicationID
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.radius = radius
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

extension Limits {
    /// Largest `size` of a locations, location groups or geofences page.
    package static let geofencePageSize = 1000
    /// Locations one geofence or location group may name.
    package static let locationsPerGeofence = 100
    /// Tags one geofence may carry.
    package static let tagsPerGeofence = 1024
    /// Bytes of a geofence's `data` as JSON.
    package static let geofenceDataBytes = 16 * 1024
}
