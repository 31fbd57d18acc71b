import HeraldServer
import HeraldStore
import HeraldTestSupport
import Testing

/// The PostgreSQL pool keeps the configured number of connections open from the start, all the
/// time (see `PostgresStoreDatabase`): no connection above a minimum, hence no idle timers.
@Suite struct DatabaseConnectionsTests {
    /// Connections to the test's database, its own store's included.
    private func connections(_ db: TestDatabase) async throws -> Int {
        let rows = try await db.database.query("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database()")
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
    func theServerKeepsItsConfiguredConnectionsOpen(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db in
            // The test store's own pool keeps its 4.
            #expect(try await poll(db, until: 4) == 4)
            var configuration = ServerConfiguration(databaseURL: try #require(db.databaseURL))
            configuration.databaseConnections = 3
            let database = try await Bootstrap.openDatabase(configuration, logger: TestDatabase.logger)
            // Opened without a query being run on it.
            #expect(try await poll(db, until: 7) == 7)
            await database.shutdown()
            #expect(try await poll(db, until: 4) == 4)
        }
    }
}
