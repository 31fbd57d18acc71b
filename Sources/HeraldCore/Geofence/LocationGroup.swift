import struct Foundation.UUID

/// A named set of an application's locations (the dashboard's "location groups").
package struct LocationGroup: Sendable, Equatable {
    package var id: Int64
    package var applicationID: UUID
    package var name: String
    package var description: String
    /// In the order they were given.
    package var locations: [Location]
    /// Milliseconds since 1970.
    package var createdAt: Int64
    package var updatedAt: Int64

    package init(
        id: Int64, applicationID: UUID, name: String, description: String, locations: [Location], createdAt: Int64,
        updatedAt: Int64
    ) {
        self.id = id
        self.applicationID = applicationID
        self.name = name
        self.description = description
        self.locations = locations
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
