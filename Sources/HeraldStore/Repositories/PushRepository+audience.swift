import HeraldCore

import struct Foundation.UUID

extension PushRepository {
    /// Of `names`, the app's topics that exist and have not expired (at `time`, epoch ms).
    func liveTopics(applicationID: UUID, names: [String], time: Int64) async throws -> [String] {
        var live: [String] = []
        for start in stride(from: 0, to: names.count, by: TopicRepository.chunk) {
            let slice = Array(names[start..<min(start + TopicRepository.chunk, names.count)])
            live += try await database.query(
                """
                SELECT name FROM topics
                WHERE app_id = \(applicationID) AND name IN (\(list: slice)) AND (expires_at IS NULL OR expires_at > \(time))
                """
            ).map { try $0.string("name") }
        }
        return live
    }

    /// The push's audience expression compiled for this moment (its topics' liveness read
    /// now), or nil without one.
    func audienceCondition(of push: Push, applicationID: UUID, time: Int64) async throws -> AudienceCondition? {
        guard let expression = push.audienceExpression else { return nil }
        let topics = AudienceCondition.topics(of: expression)
        let live = topics.isEmpty ? [] : try await liveTopics(applicationID: applicationID, names: topics, time: time)
        return AudienceCondition(expression, liveTopics: Set(live))
    }

    /// How many active devices the push would reach if it were sent now: its targets and its
    /// audience expression, counted by the database (`validate_only`'s `audience_count`). A
    /// local-time push counts the devices of every zone.
    package func audienceCount(of push: Push, applicationID: UUID) async throws -> Int {
        let time = clock.now.epochMilliseconds
        var condition: SQL = "d.app_id = \(applicationID) AND d.active = 1"
        var interactiveOnly = false
        switch push.audience {
        case .devices(let ids):
            condition.append(" AND d.uuid IN (\(list: ids))")
        case .selection(let platforms, let topics, let customUserIDs, let interactive):
            interactiveOnly = interactive
            if let platforms {
                condition.append(" AND d.platform_type IN (\(list: platforms.map(\.rawValue).sorted()))")
            }
            // Subscribed to any live topic or registered under any custom user id.
            var sources: [SQL] = []
            let live = topics.isEmpty ? [] : try await liveTopics(applicationID: applicationID, names: topics, time: time)
            for start in stride(from: 0, to: live.count, by: TopicRepository.chunk) {
                let slice = Array(live[start..<min(start + TopicRepository.chunk, live.count)])
                sources.append("EXISTS (SELECT 1 FROM device_tags t WHERE t.device_id = d.id AND t.tag IN (\(list: slice)))")
            }
            if !customUserIDs.isEmpty { sources.append("d.custom_user_id IN (\(list: customUserIDs))") }
            if !topics.isEmpty || !customUserIDs.isEmpty {
                condition.append(" AND (")
                if sources.isEmpty { condition.append("1 = 0") }
                for (index, source) in sources.enumerated() {
                    if index > 0 { condition.append(" OR ") }
                    condition.append(source)
                }
                condition.append(")")
            }
        }
        if let filter = try await audienceCondition(of: push, applicationID: applicationID, time: time) {
            condition.append(" AND \(filter.sql)")
        }
        // Grouped by what `interactive-only` looks at, so that the devices that cannot show an
        // interactive notification are left out as the fan-out leaves them out.
        let rows = try await database.query(
            """
            SELECT d.platform_type, d.os_version, COUNT(*) AS devices FROM devices d WHERE \(condition)
            GROUP BY d.platform_type, d.os_version
            """)
        var count = 0
        for row in rows {
            if interactiveOnly {
                guard let type = PlatformType(rawValue: try row.string("platform_type")),
                    InteractivePush.isSupported(by: type, osVersion: try row.optionalString("os_version"))
                else { continue }
            }
            count += Int(try row.int("devices"))
        }
        return count
    }

    /// Devices read per statement when an audience expression pages over the app's devices: the
    /// page's `limit` times this.
    static let audienceWindowFactor = 4

    /// A page of an audience expression over the app's devices: the statement reads the next
    /// `limit × audienceWindowFactor` devices that `condition` selects, in id order through the
    /// `devices (app_id, id)` index, and keeps the first `limit` for which `filter` holds. Each
    /// statement reads a bounded window whatever the planner guesses of the expression's
    /// selectivity: written as one filtered, ordered query, PostgreSQL guessed 25 matches, chose a
    /// bitmap scan of every device after the cursor and a sort, and took 2.5 s a page on
    /// 1,000,000 devices (EXPLAIN ANALYZE, docs/benchmarks-history.md). A sparse audience makes pages with few
    /// devices; the cursor moves past the window either way.
    func windowPage(_ condition: SQL, filter: SQL, interactiveOnly: Bool, after cursor: Int64, limit: Int) async throws -> AudiencePage {
        let window = limit * Self.audienceWindowFactor
        let rows = try await database.query(
            """
            WITH w AS (
                SELECT d.id, d.uuid, d.platform_id, d.platform_type, d.os, d.os_version, d.custom_user_id, d.time_zone
                FROM devices d WHERE \(condition) ORDER BY d.id LIMIT \(window))
            SELECT s.last, s.n, m.id, m.platform_type, m.os_version
            FROM (SELECT MAX(id) AS last, COUNT(*) AS n FROM w) s
            LEFT JOIN (SELECT d.id, d.platform_type, d.os_version FROM w d WHERE \(filter) ORDER BY d.id LIMIT \(limit)) m ON 1 = 1
            ORDER BY m.id
            """)
        let first = rows.first
        let read = try first?.optionalInt("n") ?? 0
        var page = AudiencePage(deviceIDs: [], cursor: try first?.optionalInt("last") ?? cursor, exhausted: read < window)
        var matched = 0
        var lastMatch = cursor
        for row in rows {
            guard let id = try row.optionalInt("id") else { continue }
            matched += 1
            lastMatch = id
            if interactiveOnly {
                guard let type = PlatformType(rawValue: try row.string("platform_type")),
                    InteractivePush.isSupported(by: type, osVersion: try row.optionalString("os_version"))
                else { continue }
            }
            page.deviceIDs.append(id)
        }
        // A full page may stop before the window's end: the next one starts after its last device.
        if matched >= limit {
            page.cursor = lastMatch
            page.exhausted = false
        }
        return page
    }
}
