import HeraldCore

import struct Foundation.UUID

extension PushController {
    /// Of the topics a push targets, those that reach no device when it is accepted, in the
    /// request's order; nil when the push does not target topics.
    func unmatchedTopics(_ push: Push, applicationID: UUID) async throws -> [String]? {
        guard case .selection(_, let topics, _, _) = push.audience, !topics.isEmpty else { return nil }
        let subscribed = try await store.topics.subscribed(applicationID: applicationID, names: topics)
        return topics.filter { !subscribed.contains($0) }
    }
}
