/// A topic to create, as `POST /v2/topics` and `POST /v2/topics/batch` receive it.
package struct TopicInput: Sendable, Equatable, Decodable {
    package var name: String?
    /// Epoch milliseconds at which the topic expires.
    package var expireAt: Int64?
    /// Seconds from now until the topic expires (at least 60).
    package var timeToLive: Int64?

    package init(name: String? = nil, expireAt: Int64? = nil, timeToLive: Int64? = nil) {
        self.name = name
        self.expireAt = expireAt
        self.timeToLive = timeToLive
    }
}

/// A topic that passed validation: its normalised name and when it expires.
package struct TopicRequest: Sendable, Equatable {
    /// Lower case, as registration tags are.
    package var name: String
    /// Epoch milliseconds; nil for never.
    package var expiresAt: Int64?

    package init(name: String, expiresAt: Int64?) {
        self.name = name
        self.expiresAt = expiresAt
    }
}

/// A batch of topics to create (`POST /v2/topics/batch`).
package struct TopicBatchInput: Sendable, Equatable, Decodable {
    package var topics: [TopicInput]?
    /// Whether the answer lists the topics, or only counts them.
    package var returnTopics: Bool?

    package init(topics: [TopicInput]? = nil, returnTopics: Bool? = nil) {
        self.topics = topics
        self.returnTopics = returnTopics
    }
}

/// Topic ids to delete (`DELETE /v2/topics/batch`).
package struct TopicIDsInput: Sendable, Equatable, Decodable {
    package var topicIds: [Int64]?

    package init(topicIds: [Int64]? = nil) {
        self.topicIds = topicIds
    }
}

extension Limits {
    /// Topics one batch may create or delete.
    package static let topicsPerBatch = 1024
    /// Largest `size` of a topics page.
    package static let topicsPageSize = 50
    /// The shortest `timeToLive` of a topic, in seconds.
    package static let topicMinimumTimeToLive: Int64 = 60
    /// The longest `timeToLive` of a topic, in seconds: 100 years.
    package static let topicMaximumTimeToLive: Int64 = 3_153_600_000
}

extension TopicInput {
    /// Checks the topic; `field` prefixes the names of the fields at fault (`topics[2]` in a batch).
    ///
    /// - Parameter now: epoch milliseconds, for `timeToLive`.
    package func validated(now: Int64, field prefix: String? = nil) throws(ValidationError) -> TopicRequest {
        func path(_ key: String) -> String { prefix.map { "\($0).\(key)" } ?? key }
        guard let name, !name.isEmpty else {
            throw ValidationError(code: "missing_field", message: "a topic needs a name", field: path("name"))
        }
        // Lower case, as registration tags (the same names) are.
        let lowered = name.lowercased()
        try lowered.requireStorable(field: path("name"))
        guard name.unicodeScalars.count <= Limits.tagLength else {
            throw ValidationError(
                code: "limit_exceeded", message: "a topic name is at most \(Limits.tagLength) characters", field: path("name"))
        }
        if expireAt != nil && timeToLive != nil {
            throw ValidationError(
                code: "conflicting_fields", message: "give expireAt or timeToLive, not both", field: path("timeToLive"))
        }
        var expiresAt: Int64?
        if let timeToLive {
            guard (Limits.topicMinimumTimeToLive...Limits.topicMaximumTimeToLive).contains(timeToLive) else {
                throw ValidationError(
                    message: "timeToLive is a number of seconds from \(Limits.topicMinimumTimeToLive) to \(Limits.topicMaximumTimeToLive)",
                    field: path("timeToLive"))
            }
            expiresAt = now + timeToLive * 1000
        }
        if let expireAt {
            guard expireAt > now else {
                throw ValidationError(
                    code: "in_the_past", message: "expireAt (epoch milliseconds) must be in the future", field: path("expireAt"))
            }
            expiresAt = expireAt
        }
        return TopicRequest(name: lowered, expiresAt: expiresAt)
    }
}

extension TopicBatchInput {
    /// Checks every topic of the batch, naming the one at fault.
    package func validated(now: Int64) throws(ValidationError) -> [TopicRequest] {
        guard let topics else {
            throw ValidationError(code: "missing_field", message: "topics is required: a list of topic objects", field: "topics")
        }
        guard topics.count <= Limits.topicsPerBatch else {
            throw ValidationError(
                code: "limit_exceeded", message: "at most \(Limits.topicsPerBatch) topics, got \(topics.count)", field: "topics")
        }
        var requests: [TopicRequest] = []
        requests.reserveCapacity(topics.count)
        for (index, topic) in topics.enumerated() {
            requests.append(try topic.validated(now: now, field: "topics[\(index)]"))
        }
        return requests
    }
}

extension TopicIDsInput {
    /// The ids, without duplicates.
    package func validated() throws(ValidationError) -> [Int64] {
        guard let topicIds else {
            throw ValidationError(code: "missing_field", message: "topicIds is required: a list of topic ids", field: "topicIds")
        }
        guard topicIds.count <= Limits.topicsPerBatch else {
            throw ValidationError(
                code: "limit_exceeded", message: "at most \(Limits.topicsPerBatch) topic ids, got \(topicIds.count)", field: "topicIds")
        }
        var seen = Set<Int64>()
        return topicIds.filter { seen.insert($0).inserted }
    }
}
