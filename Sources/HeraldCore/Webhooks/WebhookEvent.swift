import Foundation

/// One event as its receivers get it: the body of every delivery of it, byte for byte the same
/// on each retry (`id` is what a receiver de-duplicates on).
public struct WebhookEvent: Sendable, Equatable {
    /// Unique per event; the same in every delivery and retry of it, to every endpoint.
    public var id: UUID
    public var type: WebhookEventType
    /// When it happened, epoch milliseconds.
    public var createdAt: Int64
    public var applicationID: UUID
    /// The event's own fields (docs/WEBHOOKS.md lists them per type).
    public var data: [String: JSONValue]

    public init(id: UUID, type: WebhookEventType, createdAt: Int64, applicationID: UUID, data: [String: JSONValue]) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.applicationID = applicationID
        self.data = data
    }

    /// The JSON body POSTed to receivers, keys sorted.
    public func body() -> String {
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
