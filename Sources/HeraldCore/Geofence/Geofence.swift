import struct Foundation.UUID

/// A geofence: a local notification that devices show on entering or leaving any of its
/// locations, between its start and expiry times.
package struct Geofence: Sendable, Equatable {
    package var id: Int64
    package var applicationID: UUID
    /// What it says and whom it is for.
    package var definition: GeofenceDefinition
    /// Its locations, in the order given.
    package var locations: [Location]
    /// Milliseconds since 1970.
    package var createdAt: Int64
    package var updatedAt: Int64

    package init(
        id: Int64, applicationID: UUID, definition: GeofenceDefinition, locations: [Location], createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.applicationID = applicationID
        self.definition = definition
        self.locations = locations
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
