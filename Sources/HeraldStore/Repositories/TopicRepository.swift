import HeraldCore

import struct Foundation.UUID

/// Topics: the names devices subscribe to (their tags, kept in `device_tags`), with an id and an
/// optional expiry each.
///
/// A topic exists once a device subscribes to it or the application creates it. An expired topic
/// is gone for every reader at once (listing, targeting, deleting); its row and subscriptions stay
/// until `removeExpired` (the background cleanup) takes them away, or until the name is used
/// again, which first removes them so that old subscribers do not come back with the new topic.
/// Deleting a topic expires it at that moment.
package struct TopicRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock

    static let columns = "id, app_id, name, created_at, expires_at"

    /// Names per statement, well under both backends' limits on bound values.
    static let chunk = 500

    // MARK: Reading

    /// One page of the application's live topics, by name, with the total that match.
    ///
    /// - Parameters:
    ///   - query: text the name must contain (case-insensitive, as names are lower case).
    ///   - hasExpiry: true for topics that expire, false for those that never do, nil for both.
    package func list(applicationID: UUID, query: String?, hasExpiry: Bool?, page: Int, size: Int) async throws -> (
        topics: [Topic], total: Int
    ) {
        let time = clock.now.epochMilliseconds
        var condition: SQL = "app_id = \(applicationID) AND (expires_at IS NULL OR expires_at > \(time))"
        if let hasExpiry {
            condition.append(hasExpiry ? " AND expires_at IS NOT NULL" : " AND expires_at IS NULL")
        }
        if let query, !query.isEmpty {
            let pattern = "%" + DeviceRepository.escapeLike(query.lowercased()) + "%"
            condition.append(" AND name LIKE \(pattern) ESCAPE '\\'")
        }
        let total = try await database.query("SELECT COUNT(*) AS n FROM topics WHERE \(condition)").first?.int("n") ?? 0
        guard size > 0 else { return ([], Int(total)) }
        let offset = max(0, page - 1) * size
        let topics = try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM topics WHERE \(condition) ORDER BY name LIMIT \(size) OFFSET \(offset)"
        ).map(Self.topic)
        return (topics, Int(total))
    }

    /// The live topic `id` of the application, if there is one.
    package func find(applicationID: UUID, id: Int64) async throws -> Topic? {
        let rows = try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM topics WHERE id = \(id) AND app_id = \(applicationID)")
        guard let topic = try rows.first.map(Self.topic), topic.isLive(at: clock.now.epochMilliseconds) else { return nil }
        return topic
    }

    /// Of `names`, those that are live topics of the application with at least one subscribed
    /// device: what a push to these topics can reach.
    package func subscribed(applicationID: UUID, names: [String]) async throws -> Set<String> {
        let time = clock.now.epochMilliseconds
        var found = Set<String>()
        for start in stride(from: 0, to: names.count, by: Self.chunk) {
            let chunk = Array(names[start..<min(start + Self.chunk, names.count)])
            for row in try await database.query(
                """
                SELECT p.name FROM topics p
                WHERE p.app_id = \(applicationID) AND p.name IN (\(list: chunk)) AND (p.expires_at IS NULL OR p.expires_at > \(time))
                    AND EXISTS (SELECT 1 FROM device_tags t WHERE t.app_id = p.app_id AND t.tag = p.name)
                """)
            {
                found.insert(try row.string("name"))
            }
        }
        return found
    }

    // MARK: Creating

    /// Creates the topics that do not exist yet; an existing live topic is returned as it is
    /// (its expiry unchanged). The answer follows `requests`' order, one entry per name.
    package func create(applicationID: UUID, _ requests: [TopicRequest]) async throws -> [(topic: Topic, created: Bool)] {
        var seen = Set<String>()
        let unique = requests.filter { seen.insert($0.name).inserted }
        guard !unique.isEmpty else { return [] }
        let time = clock.now.epochMilliseconds
        return try await database.transaction { connection in
            var byName = try await Self.existing(connection, applicationID: applicationID, names: unique.map(\.name), time: time)
            var created = Set<String>()
            let missing = unique.filter { byName[$0.name] == nil }.sorted { $0.name < $1.name }
            for start in stride(from: 0, to: missing.count, by: Self.chunk / 2) {
                var insert: SQL = "INSERT INTO topics (app_id, name, created_at, expires_at) VALUES "
                for (index, request) in missing[start..<min(start + Self.chunk / 2, missing.count)].enumerated() {
                    insert.append(
                        "\(unsafeRaw: index == 0 ? "" : ", ")(\(applicationID), \(request.name), \(time), \(request.expiresAt))")
                }
                insert.append(" ON CONFLICT (app_id, name) DO NOTHING RETURNING \(unsafeRaw: Self.columns)")
                for row in try await connection.query(insert) {
                    let topic = try Self.topic(row)
                    byName[topic.name] = topic
                    created.insert(topic.name)
                }
            }
            // Created meanwhile by another transaction: read it.
            let raced = unique.map(\.name).filter { byName[$0] == nil }
            if !raced.isEmpty {
                for (name, topic) in try await Self.existing(connection, applicationID: applicationID, names: raced, time: time) {
                    byName[name] = topic
                }
            }
            return try unique.map { request in
                guard let topic = byName[request.name] else {
                    throw StoreError(reason: .unknown("topic"), message: "topic '\(request.name)' was neither created nor found")
                }
                return (topic, created.contains(request.name))
            }
        }
    }

    /// The live topics among `names`, by name, inside a transaction; expired ones of those names
    /// are removed first, with their subscriptions.
    static func existing(_ connection: any SQLExecutor, applicationID: UUID, names: [String], time: Int64) async throws -> [String: Topic] {
        var byName: [String: Topic] = [:]
        var expired: [Topic] = []
        for start in stride(from: 0, to: names.count, by: chunk) {
            let slice = Array(names[start..<min(start + chunk, names.count)])
            for row in try await connection.query(
                "SELECT \(unsafeRaw: columns) FROM topics WHERE app_id = \(applicationID) AND name IN (\(list: slice))")
            {
                let topic = try Self.topic(row)
                if topic.isLive(at: time) { byName[topic.name] = topic } else { expired.append(topic) }
            }
        }
        // The topic's row first, as the cleanup locks it first: the two never wait on each other in turn.
        for topic in expired {
            // Only the transaction whose DELETE removed the row removes its subscriptions. On
            // PostgreSQL another one renewing the name at the same moment removed it first and
            // this DELETE, having waited for it, finds nothing: the subscriptions under the name
            // are then the new topic's, written by that transaction, and stay. (The expired row
            // holds the name, so no new topic of that name exists while it does.)
            let removed = try await connection.query("DELETE FROM topics WHERE id = \(topic.id) RETURNING id")
            guard !removed.isEmpty else { continue }
            try await connection.query("DELETE FROM device_tags WHERE app_id = \(applicationID) AND tag = \(topic.name)")
        }
        return byName
    }

    /// Makes each (application, name) a live topic inside the caller's transaction, before devices
    /// subscribe to it: registration creates topics as it goes.
    static func ensure(_ connection: any SQLExecutor, _ subscriptions: [(applicationID: UUID, name: String)], time: Int64) async throws {
        var namesByApp: [UUID: Set<String>] = [:]
        for (applicationID, name) in subscriptions { namesByApp[applicationID, default: []].insert(name) }
        for (applicationID, names) in namesByApp.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            let live = try await existing(connection, applicationID: applicationID, names: names.sorted(), time: time)
            // Sorted, so that concurrent transactions take the unique index's locks in one order.
            let missing = names.filter { live[$0] == nil }.sorted()
            for start in stride(from: 0, to: missing.count, by: chunk / 2) {
                var insert: SQL = "INSERT INTO topics (app_id, name, created_at) VALUES "
                for (index, name) in missing[start..<min(start + chunk / 2, missing.count)].enumerated() {
                    insert.append("\(unsafeRaw: index == 0 ? "" : ", ")(\(applicationID), \(name), \(time))")
                }
                insert.append(" ON CONFLICT (app_id, name) DO NOTHING")
                try await connection.query(insert)
            }
        }
    }

    // MARK: Deleting

    /// Deletes the application's live topics with these ids; returns how many there were.
    /// A deleted topic expires now: gone at once, its subscriptions removed in the background.
    package func delete(applicationID: UUID, ids: [Int64]) async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        let time = clock.now.epochMilliseconds
        var deleted = 0
        for start in stride(from: 0, to: ids.count, by: Self.chunk) {
            let slice = Array(ids[start..<min(start + Self.chunk, ids.count)])
            deleted += try await database.query(
                """
                UPDATE topics SET expires_at = \(time)
                WHERE app_id = \(applicationID) AND id IN (\(list: slice)) AND (expires_at IS NULL OR expires_at > \(time))
                RETURNING id
                """
            ).count
        }
        return deleted
    }

    /// What one cleanup removed.
    package struct Cleanup: Sendable, Equatable {
        /// Subscriptions of expired topics.
        package var subscriptions = 0
        /// Expired topics, once they had no subscription left.
        package var topics = 0

        package init(subscriptions: Int = 0, topics: Int = 0) {
            self.subscriptions = subscriptions
            self.topics = topics
        }
    }

    /// Removes the subscriptions of every topic expired by now, then the topics themselves, at
    /// most `chunk` subscriptions per transaction so that a topic with a million subscribers
    /// never holds the database for long.
    ///
    /// - Parameter time: epoch milliseconds to judge expiry at (by default the store's clock).
    package func removeExpired(at time: Int64? = nil, chunk: Int = 10_000) async throws -> Cleanup {
        let time = time ?? clock.now.epochMilliseconds
        let dialect = database.dialect
        var cleanup = Cleanup()
        while true {
            let expired = try await database.query(
                """
                SELECT \(unsafeRaw: Self.columns) FROM topics WHERE expires_at IS NOT NULL AND expires_at <= \(time)
                ORDER BY expires_at, id LIMIT 100
                """
            ).map(Self.topic)
            if expired.isEmpty { return cleanup }
            for topic in expired {
                var finished = false
                while !finished {
                    let step = try await database.transaction { connection -> (removed: Int, done: Bool, deletedTopic: Bool) in
                        // The row still being there, expired, means no live topic has taken the name.
                        let lock = dialect == .postgres ? " FOR UPDATE" : ""
                        let still = try await connection.query(
                            "SELECT id FROM topics WHERE id = \(topic.id) AND expires_at <= \(time)\(unsafeRaw: lock)")
                        if still.isEmpty { return (0, true, false) }
                        let removed = try await connection.query(
                            """
                            DELETE FROM device_tags WHERE (device_id, tag) IN (
                                SELECT device_id, tag FROM device_tags WHERE app_id = \(topic.applicationID) AND tag = \(topic.name)
                                LIMIT \(chunk))
                            RETURNING device_id
                            """
                        ).count
                        guard removed < chunk else { return (removed, false, false) }
                        try await connection.query("DELETE FROM topics WHERE id = \(topic.id)")
                        return (removed, true, true)
                    }
                    cleanup.subscriptions += step.removed
                    finished = step.done
                    if step.deletedTopic { cleanup.topics += 1 }
                }
            }
        }
    }

    // MARK: Helpers

    static func topic(_ row: SQLRow) throws -> Topic {
        Topic(
            id: try row.int("id"), applicationID: try row.uuid("app_id"), name: try row.string("name"),
            createdAt: try row.int("created_at"), expiresAt: try row.optionalInt("expires_at"))
    }
}
