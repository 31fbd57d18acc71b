import HeraldCore

import struct Foundation.UUID

extension TopicRepository {
    /// How many of the application's devices are subscribed to each of `names` (a name no
    /// device holds is absent): what the dashboard's Topics page shows beside each topic.
    package func subscriberCounts(applicationID: UUID, names: [String]) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for start in stride(from: 0, to: names.count, by: Self.chunk) {
            let chunk = Array(names[start..<min(start + Self.chunk, names.count)])
            for row in try await database.query(
                """
                SELECT tag, COUNT(*) AS n FROM device_tags WHERE app_id = \(applicationID) AND tag IN (\(list: chunk)) GROUP BY tag
                """)
            {
                counts[try row.string("tag")] = Int(try row.int("n"))
            }
        }
        return counts
    }
}
