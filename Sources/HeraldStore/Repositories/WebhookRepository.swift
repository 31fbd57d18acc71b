import HeraldCore

import struct Foundation.UUID

/// A queued delivery of one event to one endpoint, as a worker holds it.
package struct WebhookDelivery: Sendable, Equatable {
    package var id: Int64
    package var endpointID: UUID
    package var url: String
    /// The endpoint's signing secret, unsealed.
    package var secret: String
    package var eventID: UUID
    package var eventType: String
    /// The JSON body, the same on every attempt.
    package var body: String
    /// Attempts made before this one.
    package var attempts: Int
    /// When the event was queued (epoch ms): retries stop a retry window after it.
    package var createdAt: Int64
    /// Which claim of the row this is (see `PushJob.claim`).
    package var claim: Int64
}

/// What one attempt came to, recorded on the delivery.
package struct WebhookAttempt: Sendable, Equatable {
    /// The receiver's HTTP status; nil when no answer came (refused address, timeout, …).
    package var status: Int?
    /// Why it failed without an answer, or nil.
    package var error: String?
    /// The start of the answer's body, as text.
    package var excerpt: String?
    /// A 2xx answer.
    package var succeeded: Bool
    /// When to try again, epoch ms; nil: never (delivered, or the retry window is over).
    package var retryAt: Int64?

    package init(status: Int?, error: String?, excerpt: String?, succeeded: Bool, retryAt: Int64?) {
        self.status = status
        self.error = error
        self.excerpt = excerpt
        self.succeeded = succeeded
        self.retryAt = retryAt
    }
}

/// A delivery as the admin API shows it: the event and the latest attempt's answer.
package struct WebhookDeliveryRecord: Sendable, Equatable {
    package var eventID: UUID
    package var eventType: String
    /// `pending` (queued or being sent), `delivered` or `failed` (given up).
    package var state: String
    package var attempts: Int
    package var createdAt: Int64
    /// When it is due again, while pending.
    package var nextAttemptAt: Int64?
    package var lastAttemptAt: Int64?
    package var lastStatus: Int?
    package var lastError: String?
    package var lastExcerpt: String?
}

/// Apps' webhook endpoints and the queue of their deliveries.
package struct WebhookRepository: Sendable {
    let database: any SQLDatabase
    let secretBox: SecretBox
    let clock: EpochClock
    /// Announced after each commit that queues a delivery (`WorkKind.webhookEvents`); the
    /// webhook workers sleep on it.
    package let work: WorkSignals

    private static let endpointColumns = "id, app_id, url, events, created_at"

    // MARK: Endpoints

    /// Stores an endpoint with a new random secret, returned in clear this once.
    package func create(applicationID: UUID, url: String, events: Set<WebhookEventType>) async throws -> (WebhookEndpoint, String) {
        let id = UUID()
        let secret = "whsec_" + Secret.generate()
        let sealed = try secretBox.seal(Array(secret.utf8), context: Self.secretContext(id))
        let ordered = WebhookEventType.allCases.filter(events.contains)
        let endpoint = WebhookEndpoint(
            id: id, applicationID: applicationID, url: url, events: ordered, createdAt: clock.now.epochMilliseconds)
        try await database.query(
            """
            INSERT INTO webhook_endpoints (id, app_id, url, events, secret_sealed, created_at)
            VALUES (\(id), \(applicationID), \(url), \(Self.eventList(ordered)), \(sealed), \(endpoint.createdAt))
            """)
        return (endpoint, secret)
    }

    package func list(applicationID: UUID) async throws -> [WebhookEndpoint] {
        try await database.query(
            "SELECT \(unsafeRaw: Self.endpointColumns) FROM webhook_endpoints WHERE app_id = \(applicationID) ORDER BY created_at, id"
        ).map(Self.endpoint)
    }

    package func find(id: UUID, applicationID: UUID) async throws -> WebhookEndpoint? {
        try await database.query(
            "SELECT \(unsafeRaw: Self.endpointColumns) FROM webhook_endpoints WHERE id = \(id) AND app_id = \(applicationID)"
        ).first.map(Self.endpoint)
    }

    /// Deletes the endpoint and its queued and past deliveries; false if the app has no such endpoint.
    package func delete(id: UUID, applicationID: UUID) async throws -> Bool {
        try await !database.query(
            "DELETE FROM webhook_endpoints WHERE id = \(id) AND app_id = \(applicationID) RETURNING id"
        ).isEmpty
    }

    /// The endpoint's newest deliveries, newest first.
    package func deliveries(endpointID: UUID, limit: Int) async throws -> [WebhookDeliveryRecord] {
        try await database.query(
            """
            SELECT event_id, event_type, state, attempts, available_at, created_at, last_attempt_at, last_status, last_error, last_excerpt
            FROM webhook_deliveries WHERE endpoint_id = \(endpointID) ORDER BY id DESC LIMIT \(limit)
            """
        ).map { row in
            let state = try row.string("state")
            let pending = state == "ready" || state == "claimed"
            return WebhookDeliveryRecord(
                eventID: try row.uuid("event_id"), eventType: try row.string("event_type"), state: pending ? "pending" : state,
                attempts: Int(try row.int("attempts")), createdAt: try row.int("created_at"),
                nextAttemptAt: pending ? try row.int("available_at") : nil, lastAttemptAt: try row.optionalInt("last_attempt_at"),
                lastStatus: try row.optionalInt("last_status").map { Int($0) }, lastError: try row.optionalString("last_error"),
                lastExcerpt: try row.optionalString("last_excerpt"))
        }
    }

    // MARK: Queue

    /// Queues `event` for every endpoint of its app that asked for its type, on `connection`
    /// (inside the transaction of the change that caused it). Returns whether any was queued.
    @discardableResult
    static func enqueue(_ connection: any SQLExecutor, _ event: WebhookEvent) async throws -> Bool {
        let pattern = "%,\(event.type.rawValue),%"
        let queued = try await connection.query(
            """
            INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, body, state, attempts, available_at, lease_until, claim, created_at)
            SELECT id, \(event.id), \(event.type.rawValue), \(event.body()), 'ready', 0, \(event.createdAt), 0, 0, \(event.createdAt)
            FROM webhook_endpoints WHERE app_id = \(event.applicationID) AND events LIKE \(pattern)
            RETURNING id
            """)
        return !queued.isEmpty
    }

    /// Whether any endpoint of the app asked for `type` (to skip building an event nobody gets).
    static func wanted(_ connection: any SQLExecutor, applicationID: UUID, type: WebhookEventType) async throws -> Bool {
        let pattern = "%,\(type.rawValue),%"
        return try await !connection.query(
            "SELECT 1 AS wanted FROM webhook_endpoints WHERE app_id = \(applicationID) AND events LIKE \(pattern) LIMIT 1"
        ).isEmpty
    }

    /// When the next delivery falls due (epoch ms): the earliest ready one's time, or a millisecond
    /// after the earliest lease ends; nil when none is pending. The workers sleep until then.
    package func nextDue() async throws -> Int64? {
        let row = try await database.query(
            """
            SELECT (SELECT MIN(available_at) FROM webhook_deliveries WHERE state = 'ready') AS ready,
                (SELECT MIN(lease_until) FROM webhook_deliveries WHERE state = 'claimed') AS leased
            """
        ).first
        let ready = try row?.optionalInt("ready")
        let leased = try row?.optionalInt("leased").map { $0 + 1 }
        return [ready, leased].compactMap { $0 }.min()
    }

    /// Takes the next due delivery for `lease` ms: a ready one, or one whose worker's lease ran
    /// out. PostgreSQL lets concurrent workers (in any process) skip each other's rows.
    package func claim(lease: Int64) async throws -> WebhookDelivery? {
        let time = clock.now.epochMilliseconds
        let lock = database.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let rows = try await database.query(
            """
            UPDATE webhook_deliveries SET state = 'claimed', lease_until = \(time + lease), claim = claim + 1
            WHERE id = (
                SELECT id FROM webhook_deliveries
                WHERE (state = 'ready' AND available_at <= \(time)) OR (state = 'claimed' AND lease_until < \(time))
                ORDER BY available_at, id LIMIT 1\(unsafeRaw: lock))
            RETURNING id, endpoint_id, event_id, event_type, body, attempts, created_at, claim
            """)
        guard let row = rows.first else { return nil }
        let endpointID = try row.uuid("endpoint_id")
        guard
            let endpoint = try await database.query(
                "SELECT url, secret_sealed FROM webhook_endpoints WHERE id = \(endpointID)"
            ).first
        else {
            // Deleted meanwhile (its deliveries go with it): nothing to send.
            return try await claim(lease: lease)
        }
        let secret = try secretBox.open(try endpoint.blob("secret_sealed"), context: Self.secretContext(endpointID))
        return WebhookDelivery(
            id: try row.int("id"), endpointID: endpointID, url: try endpoint.string("url"), secret: String(decoding: secret, as: UTF8.self),
            eventID: try row.uuid("event_id"), eventType: try row.string("event_type"), body: try row.string("body"),
            attempts: Int(try row.int("attempts")), createdAt: try row.int("created_at"), claim: try row.int("claim"))
    }

    /// Records an attempt on a claimed delivery: delivered, due again at `retryAt`, or given
    /// up. Throws `leaseLost` if another worker has claimed it since.
    package func record(_ delivery: WebhookDelivery, _ attempt: WebhookAttempt) async throws {
        let state = attempt.succeeded ? "delivered" : attempt.retryAt == nil ? "failed" : "ready"
        let time = clock.now.epochMilliseconds
        let rows = try await database.query(
            """
            UPDATE webhook_deliveries SET state = \(state), attempts = attempts + 1, available_at = \(attempt.retryAt ?? time),
                lease_until = 0, last_attempt_at = \(time), last_status = \(attempt.status.map { Int64($0) }),
                last_error = \(attempt.error), last_excerpt = \(attempt.excerpt)
            WHERE id = \(delivery.id) AND claim = \(delivery.claim) AND state = 'claimed'
            RETURNING id
            """)
        if rows.isEmpty {
            throw StoreError(
                reason: .leaseLost, message: "webhook delivery \(delivery.id): its lease ran out and another worker claimed it")
        }
    }

    // MARK: Helpers

    static func secretContext(_ id: UUID) -> String { "webhook-secret:\(id.lowercasedString)" }

    static func eventList(_ events: [WebhookEventType]) -> String {
        "," + events.map(\.rawValue).joined(separator: ",") + ","
    }

    static func endpoint(_ row: SQLRow) throws -> WebhookEndpoint {
        WebhookEndpoint(
            id: try row.uuid("id"), applicationID: try row.uuid("app_id"), url: try row.string("url"),
            events: try row.string("events").split(separator: ",").compactMap { WebhookEventType(rawValue: String($0)) },
            createdAt: try row.int("created_at"))
    }
}
