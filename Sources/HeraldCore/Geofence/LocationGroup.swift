import struct Foundation.UUID

/// A named set of an application's locations (the dashboard's "location groups").
public struct LocationGroup: Sendable, Equatable {
    public var id: Int64
    public var applicationID: UUID
    public var name: String
    public var description: String
    /// In the order they were given.
    public var locations: [Location]
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
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
