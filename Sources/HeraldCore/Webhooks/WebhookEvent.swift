import Foundation

/// One event as its receivers get it: the body of every delivery of it, byte for byte the same
/// on each retry (`id` is what a receiver de-duplicates on).
package struct WebhookEvent: Sendable, Equatable {
    /// Unique per event; the same in every delivery and retry of it, to every endpoint.
    package var id: UUID
    package var type: WebhookEventType
    /// When it happened, epoch milliseconds.
    package var createdAt: Int64
    package var applicationID: UUID
    /// The event's own fields (docs/WEBHOOKS.md lists them per type).
    package var data: [String: JSONValue]

    package init(id: UUID, type: WebhookEventType, createdAt: Int64, applicationID: UUID, data: [String: JSONValue]) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.applicationID = applicationID
        self.data = data
    }

    /// The JSON body POSTed to receivers, keys sorted.
    package func body() -> String {
        let envelope: [String: JSONValue] = [
            "id": .string(id.lowercasedString), "type": .string(type.rawValue), "created_at": .int(createdAt),
            "app_id": .string(applicationID.lowercasedString), "data": .object(data),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a tree of JSONValue cannot fail (no non-finite doubles are put in one here).
        let bytes = (try? encoder.encode(JSONValue.object(envelope))) ?? Data("{}".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }
}
