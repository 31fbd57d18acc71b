import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// An application's topics: the operations `/v2/topics` and the dashboard's Topics page share.
/// Expired topics are gone for all of them.
struct AppTopics: Sendable {
    let store: Store
    let clock: EpochClock

    /// One page of the live topics that match `query`, by name, with their total.
    func list(applicationID: UUID, _ query: TopicPageQuery) async throws -> (topics: [Topic], total: Int) {
        try await store.topics.list(
            applicationID: applicationID, query: query.query, hasExpiry: query.hasExpiry, page: query.page, size: query.size)
    }

    /// Creates the topic; one that already had this name is returned unchanged (`created` false).
    func create(applicationID: UUID, _ input: TopicInput) async throws -> (topic: Topic, created: Bool) {
        let topic = try input.validated(now: clock.now.epochMilliseconds)
        guard let result = try await store.topics.create(applicationID: applicationID, [topic]).first else {
            throw APIError.badRequest("the topic could not be created", field: "name")
        }
        return result
    }

    /// Deletes (expires) the topic; not found when the application has no live topic `id`.
    func delete(applicationID: UUID, id: Int64) async throws {
        guard try await store.topics.delete(applicationID: applicationID, ids: [id]) == 1 else { throw APIError.notFound("topic") }
    }

    /// A topic id from a path; one that cannot exist is simply not found.
    static func id(_ raw: String?) throws -> Int64 {
        guard let raw, let id = Int64(raw), id > 0 else { throw APIError.notFound("topic") }
        return id
    }
}
