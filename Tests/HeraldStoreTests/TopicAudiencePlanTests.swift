import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// The query that reads a topic's subscribers for a fan-out page is an index range on both
/// backends, never a scan of the subscriptions table.
@Suite struct TopicAudiencePlanTests {
    @Test(arguments: Backend.available)
    func topicSubscribersAreReadThroughAnIndex(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let numbers =
                backend == .postgres
                ? "generate_series(1, 5000) AS n(i)"
                : "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000) SELECT i FROM n) AS n"
            try await db.database.query(
                """
                INSERT INTO devices (uuid, app_id, platform_id, platform_type, token, os, active, created_at, updated_at)
                SELECT 'u' || i, \(fixture.app.id), \(fixture.platform.id), 'ios', 't' || i, 'ios', 1, 0, 0 FROM \(unsafeRaw: numbers)
                """)
            try await db.database.query(
                """
                INSERT INTO device_tags (device_id, app_id, tag)
                SELECT id, app_id, CASE WHEN id % 2 = 0 THEN 'big' ELSE 'other' END FROM devices
                """)
            try await db.database.query(
                "INSERT INTO device_tags (device_id, app_id, tag) SELECT id, app_id, 'small' FROM devices WHERE id % 500 = 0")
            try await db.database.query("ANALYZE")

            let query = PushRepository.subscribersQuery(applicationID: fixture.app.id, topics: ["big", "small"], after: 100, limit: 500)
            let explain: SQL = "\(unsafeRaw: backend == .postgres ? "EXPLAIN " : "EXPLAIN QUERY PLAN ")\(query)"
            let plan = try await db.database.query(explain).map { row in
                try row.optionalString(backend == .postgres ? "QUERY PLAN" : "detail") ?? ""
            }.joined(separator: "\n")
            if backend == .postgres {
                #expect(!plan.contains("Seq Scan"), "\(plan)")
                #expect(plan.contains("Index"), "\(plan)")
            } else {
                #expect(!plan.contains("SCAN device_tags"), "\(plan)")
                #expect(plan.contains("SEARCH device_tags USING COVERING INDEX device_tags_app_tag"), "\(plan)")
            }
            // And the rows are each topic's next subscribers in id order.
            let rows = try await db.database.query(query)
            let small = try rows.filter { try $0.int("source") == 1 }.map { try $0.int("device_id") }
            #expect(small == [500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000])
            #expect(try rows.filter { try $0.int("source") == 0 }.count == 500)
        }
    }
}
