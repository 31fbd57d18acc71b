import struct Foundation.UUID

/// A name that devices of an application subscribe to (their registration tags), and pushes target.
///
/// Topics appear when a device first subscribes or when the application creates them; one that
/// has expired is treated as gone: it is not listed, cannot be targeted, and its subscriptions
/// are removed in the background.
package struct Topic: Sendable, Equatable {
    package var id: Int64
    package var applicationID: UUID
    /// Lower case, as tags are.
    package var name: String
    /// Milliseconds since 1970.
    package var createdAt: Int64
    /// When the topic expires (epoch ms); nil for never.
    package var expiresAt: Int64?

    package init(id: Int64, applicationID: UUID, name: String, createdAt: Int64, expiresAt: Int64?) {
        self.id = id
        self.applicationID = applicationID
        self.name = name
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// Whether the topic is still alive at `now` (epoch ms).
    package func isLive(at now: Int64) -> Bool {
        expiresAt.map { $0 > now } ?? true
    }
}
