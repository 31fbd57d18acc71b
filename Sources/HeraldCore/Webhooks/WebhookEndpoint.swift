import struct Foundation.UUID

/// Where an app wants its events POSTed, and which ones. Its secret is not here: it is shown
/// once when the endpoint is created and kept sealed by the store.
package struct WebhookEndpoint: Sendable, Equatable {
    package var id: UUID
    package var applicationID: UUID
    /// `https://…` (or `http://…` where the operator allows private addresses).
    package var url: String
    /// The events it receives, in `WebhookEventType.allCases` order.
    package var events: [WebhookEventType]
    /// Epoch milliseconds.
    package var createdAt: Int64

    package init(id: UUID, applicationID: UUID, url: String, events: [WebhookEventType], createdAt: Int64) {
        self.id = id
        self.applicationID = applicationID
        self.url = url
        self.events = events
        self.createdAt = createdAt
    }
}
