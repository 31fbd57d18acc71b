import struct Foundation.UUID

/// A geofence: a local notification that devices show on entering or leaving any of its
/// locations, between its start and expiry times.
public struct Geofence: Sendable, Equatable {
    public var id: Int64
    public var applicationID: UUID
    /// What it says and whom it is for.
    public var definition: GeofenceDefinition
    /// Its locations, in the order given.
    public var locations: [Location]
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
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
