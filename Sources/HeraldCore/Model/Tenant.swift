import struct Foundation.UUID

/// An organisation that owns applications; admin tokens may be scoped to one.
public struct Tenant: Sendable, Equatable, Codable {
    public var id: UUID
    public var name: String
    /// Milliseconds since 1970.
    public var createdAt: Int64

    public init(id: UUID, name: String, createdAt: Int64) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
    }
}
