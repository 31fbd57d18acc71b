import HeraldCore
import HeraldStore
import Hummingbird

/// JSON shapes of `/admin/v1/apps/:app/webhooks`. The secret appears only in the answer that created it.

struct WebhookEndpointView: ResponseEncodable {
    var id: String
    var appID: String
    var url: String
    var events: [String]
    var createdAt: Int64
    /// Only when just created.
    var secret: String?

    enum CodingKeys: String, CodingKey {
        case id
        case appID = "app_id"
        case url, events
        case createdAt = "created_at"
        case secret
    }

    init(_ endpoint: WebhookEndpoint, secret: String? = nil) {
        id = endpoint.id.lowercasedString
        appID = endpoint.applicationID.lowercasedString
        url = endpoint.url
        events = endpoint.events.map(\.rawValue)
        createdAt = endpoint.createdAt
        self.secret = secret
    }
}

struct WebhookDeliveryView: ResponseEncodable {
    var eventID: String
    var eventType: String
    var state: String
    var attempts: Int
    var createdAt: Int64
    var nextAttemptAt: Int64?
    var lastAttemptAt: Int64?
    var lastStatus: Int?
    var lastError: String?
    var lastResponse: String?

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id"
        case eventType = "event_type"
        case state, attempts
        case createdAt = "created_at"
        case
            nextAttemptAt = "next_attempt_at"
        case lastAttemptAt = "last_attempt_at"
        case lastStatus = "last_status"
        case
            lastError = "last_error"
        case lastResponse = "last_response"
    }

    func encode(to encoder: any Encoder) throws {
        // Every field present (null when unknown), so that receivers of the list see its shape.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(eventID, forKey: .eventID)
        try container.encode(eventType, forKey: .eventType)
        try container.encode(state, forKey: .state)
        try container.encode(attempts, forKey: .attempts)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(nextAttemptAt, forKey: .nextAttemptAt)
        try container.encode(lastAttemptAt, forKey: .lastAttemptAt)
        try container.encode(lastStatus, forKey: .lastStatus)
        try container.encode(lastError, forKey: .lastError)
        try container.encode(lastResponse, forKey: .lastResponse)
    }

    init(_ record: WebhookDeliveryRecord) {
        eventID = record.eventID.lowercasedString
        eventType = record.eventType
        state = record.state
        attempts = record.attempts
        createdAt = record.createdAt
        nextAttemptAt = record.nextAttemptAt
        lastAttemptAt = record.lastAttemptAt
        lastStatus = record.lastStatus
        lastError = record.lastError
        lastResponse = record.lastExcerpt
    }
}
