import HeraldCore

import struct Foundation.UUID

extension PushRepository {
    /// Topics per statement when reading subscriptions (each is a subquery of its own).
    static let topicsPerStatement = 64

    /// `audiencePage` for a push that targets topics, and perhaps custom user ids too: the union,
    /// one copy per device, in device id order, limited by `filter` (the push's audience
    /// expression) when it has one.
    ///
    /// Each source is read from its index: a live topic's subscriptions from `device_tags
    /// (app_id, tag, device_id)`, the custom user ids from `devices (app_id, custom_user_id)`, each
    /// only the next `limit` ids after the cursor. The page is the first `limit` of their merge, so
    /// a topic with a million subscribers costs the same per page as a broadcast, and a small topic
    /// in a large application does not scan the application's devices. Topics are checked at
    /// every page: one that expires during the fan-out reaches no one after that.
    func subscriberPage(
        applicationID: UUID, platforms: Set<PlatformType>?, topics: [String], customUserIDs: [String], interactiveOnly: Bool,
        timeZones: [String] = [], filter: SQL? = nil, after cursor: Int64, limit: Int
    ) async throws -> AudiencePage {
        let live = try await liveTopics(applicationID: applicationID, names: topics, time: clock.now.epochMilliseconds)

        // Every source's next `limit` ids; a source that gives `limit` may have more.
        var sources: [[Int64]] = []
        for start in stride(from: 0, to: live.count, by: Self.topicsPerStatement) {
            let slice = Array(live[start..<min(start + Self.topicsPerStatement, live.count)])
            var bySource = [[Int64]](repeating: [], count: slice.count)
            for row in try await database.query(
                Self.subscribersQuery(applicationID: applicationID, topics: slice, after: cursor, limit: limit))
            {
                bySource[Int(try row.int("source"))].append(try row.int("device_id"))
            }
            sources += bySource
        }
        if !customUserIDs.isEmpty {
            sources.append(
                try await database.query(
                    """
                    SELECT id FROM devices WHERE app_id = \(applicationID) AND custom_user_id IN (\(list: customUserIDs)) AND id > \(cursor)
                    ORDER BY id LIMIT \(limit)
                    """
                ).map { try $0.int("id") })
        }

        let merged = Set(sources.joined()).sorted()
        let read = Array(merged.prefix(limit))
        let anyFull = sources.contains { $0.count >= limit }
        var page = AudiencePage(deviceIDs: [], cursor: read.last ?? cursor, exhausted: merged.count <= limit && !anyFull)
        guard !read.isEmpty else {
            page.exhausted = true
            return page
        }

        var condition: SQL = "d.id IN (\(list: read)) AND d.app_id = \(applicationID) AND d.active = 1"
        if let platforms {
            condition.append(" AND d.platform_type IN (\(list: platforms.map(\.rawValue).sorted()))")
        }
        if !timeZones.isEmpty {
            condition.append(" AND COALESCE(d.time_zone, '') IN (\(list: timeZones))")
        }
        // `target.audience` (an `AudienceCondition` over `devices d`): the intersection.
        if let filter { condition.append(" AND \(filter)") }
        for row in try await database.query("SELECT d.id, d.platform_type, d.os_version FROM devices d WHERE \(condition) ORDER BY d.id") {
            if interactiveOnly {
                guard let type = PlatformType(rawValue: try row.string("platform_type")),
                    InteractivePush.isSupported(by: type, osVersion: try row.optionalString("os_version"))
                else { continue }
            }
            page.deviceIDs.append(try row.int("id"))
        }
        return page
    }

    /// The next `limit` subscriptions after `cursor` of each topic, as `(source, device_id)` rows
    /// where `source` is the topic's index in `topics`: one index range per topic.
    static func subscribersQuery(applicationID: UUID, topics: [String], after cursor: Int64, limit: Int) -> SQL {
        var union: SQL = ""
        for (index, name) in topics.enumerated() {
            union.append(
                """
                \(unsafeRaw: index == 0 ? "" : " UNION ALL ")SELECT \(unsafeRaw: String(index)) AS source, device_id FROM (
                    SELECT device_id FROM device_tags WHERE app_id = \(applicationID) AND tag = \(name) AND device_id > \(cursor)
                    ORDER BY device_id LIMIT \(limit)) s\(unsafeRaw: String(index))
                """)
        }
        return union
    }
}
