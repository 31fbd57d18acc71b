import HeraldCore

import struct Foundation.UUID

// MARK: Webhook events of delivery

extension PushRepository {
    /// Queues `push.done` for a push that has just closed, with its final counters and failures
    /// by reason, if any endpoint of its app wants it. Returns whether one was queued.
    static func pushDone(_ connection: any SQLExecutor, _ push: StoredPush, time: Int64) async throws -> Bool {
        guard try await WebhookRepository.wanted(connection, applicationID: push.applicationID, type: .pushDone) else { return false }
        var failures: [String: JSONValue] = [:]
        for row in try await connection.query("SELECT reason, count FROM push_failures WHERE push_id = \(push.id)") {
            failures[try row.string("reason")] = .int(try row.int("count"))
        }
        let data: [String: JSONValue] = [
            "push_id": .string(push.id.lowercasedString), "created_at": .int(push.createdAt),
            "targeted": .int(Int64(push.targeted)), "delivered": .int(Int64(push.delivered)), "failed": .int(Int64(push.failed)),
            "invalid_tokens": .int(Int64(push.invalidTokens)), "expired": .int(Int64(push.expired)),
            "skipped": .int(Int64(push.skipped)), "failures": .object(failures),
        ]
        let event = WebhookEvent(id: UUID(), type: .pushDone, createdAt: time, applicationID: push.applicationID, data: data)
        return try await WebhookRepository.enqueue(connection, event)
    }

    /// Queues `device.deactivated` for a device (`uuid`, `app_id`, `token` of `row`) that
    /// delivery has just deactivated, for the endpoints that want it (the caller asks
    /// `WebhookRepository.wanted` once per batch). Returns whether one was queued.
    static func deviceDeactivated(
        _ connection: any SQLExecutor, _ row: SQLRow, reason: String, providerTime: Int64?, time: Int64
    ) async throws -> Bool {
        let applicationID = try row.uuid("app_id")
        let data: [String: JSONValue] = [
            "device_uuid": .string(try row.string("uuid")), "token": .string(try row.string("token")), "reason": .string(reason),
            "provider_timestamp": providerTime.map { .int($0) } ?? .null,
        ]
        let event = WebhookEvent(id: UUID(), type: .deviceDeactivated, createdAt: time, applicationID: applicationID, data: data)
        return try await WebhookRepository.enqueue(connection, event)
    }
}
