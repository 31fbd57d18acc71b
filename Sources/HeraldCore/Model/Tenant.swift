import struct Foundation.UUID

/// An organisation that owns applications; admin tokens may be scoped to one.
package struct Tenant: Sendable, Equatable, Codable {
    package var id: UUID
    package var name: String
    /// Milliseconds since 1970.
    package var createdAt: Int64

    package init(id: UUID, name: String, createdAt: Int64) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
    }
}
