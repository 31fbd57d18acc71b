import Foundation
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Testing

/// The PostgreSQL pool keeps one connection open from the start, opens more on demand up to the
/// configured number and never beyond, and closes those again once idle (see
/// `PostgresStoreDatabase`).
@Suite struct DatabaseConnectionsTests {
    static let applicationName = "herald-connections-test"

    /// The server's connections to the test's database (told apart by their application name).
    private func connections(_ db: TestDatabase) async throws -> Int {
        let rows = try await db.database.query(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = \(Self.applicationName)")
        return Int(try rows[0].int("n"))
    }

    /// Polls until `expected` connections are open, a minute at most: the deadline only bounds a
    /// failure. When the whole suite runs at once on two cores, the pool's connection attempts
    /// queue behind hundreds of others and back off; 20 s was seen to run out in a full run.
    private func poll(_ db: TestDatabase, until expected: Int) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(60)
        var count = try await connections(db)
        while count != expected && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            count = try await connections(db)
        }
        return count
    }

    @Test(arguments: Backend.available.filter { $0 == .postgres })
    func theServerOpensConnectionsOnDemandUpToItsLimitAndClosesThemWhenIdle(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db in
            let testURL = try #require(db.databaseURL)
            var url = try #require(URLComponents(string: testURL))
            url.queryItems = (url.queryItems ?? []) + [URLQueryItem(name: "application_name", value: Self.applicationName)]
            var configuration = ServerConfiguration(databaseURL: try #require(url.string))
            configuration.databaseConnections = 3
            let database = try await Bootstrap.openDatabase(configuration, logger: TestDatabase.logger)
            // One, opened without a query being run on it.
            #expect(try await poll(db, until: 1) == 1)

            // Nine slow queries at once: three connections, never more.
            let busiest = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<9 {
                    group.addTask {
                        try await database.query("SELECT pg_sleep(0.4)")
                        return 0
                    }
                }
                // The most connections seen while they run (polled until three are, or a minute).
                group.addTask {
                    var most = 0
                    let deadline = ContinuousClock.now + .seconds(60)
                    while most < 3 && ContinuousClock.now < deadline {
                        most = max(most, try await connections(db))
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    return most
                }
                return try await group.reduce(0) { max($0, $1) }
            }
            #expect(busiest == 3)
            #expect(try await connections(db) <= 3)

            // Idle again: back to the one (after `PostgresStoreDatabase.idleConnectionLifetime`).
            #expect(try await poll(db, until: 1) == 1)
            await database.shutdown()
            #expect(try await poll(db, until: 0) == 0)
        }
    }
}
