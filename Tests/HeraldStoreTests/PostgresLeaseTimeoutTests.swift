import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// A query or transaction waits at most the lease timeout for a connection of the pool, then
/// fails with `StoreError` `.unavailable` (a 503), never for good; once it has a connection the
/// timeout no longer applies (a statement is never reported failed while the server runs it).
///
/// The timeout also covers opening a connection, which on a loaded machine can take longer than
/// these tests' short bounds: each first waits (polling, bounded) until the pool's connection is
/// open, which the pool then keeps.
@Suite struct PostgresLeaseTimeoutTests {
    /// Polls `SELECT 1` until it succeeds (the pool's first connection is open); at most a minute.
    func warmUp(_ store: PostgresStoreDatabase) async throws {
        let end = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < end {
            if (try? await store.query("SELECT 1 AS one")) != nil { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the pool opened no connection within a minute")
    }

    @Test(.timeLimit(.minutes(2)))
    func aQueryWaitingForABusyPoolFailsAsUnavailable() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let url = try #require(db.databaseURL)
            let store = try PostgresStoreDatabase(
                url: url, maximumConnections: 1, leaseTimeout: .milliseconds(300), logger: TestDatabase.logger)
            try await warmUp(store)
            // The pool's one connection is in a transaction that stays open.
            let held = await HeldTransaction.start(on: store) { connection in
                try await connection.query("SELECT 1 AS one").count
            }
            let unavailable: @Sendable (any Error) -> Bool = { ($0 as? StoreError)?.reason == .unavailable }
            await #expect(performing: { try await store.query("SELECT 1 AS one") }, throws: unavailable)
            await #expect(performing: { try await store.transaction { try await $0.query("SELECT 1 AS one") } }, throws: unavailable)

            // The transaction that held it is unharmed, and the pool serves again.
            #expect(try await held.commit() == 1)
            #expect(try await store.query("SELECT 1 AS one").first?.int("one") == 1)
            await store.shutdown()
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aStatementLongerThanTheLeaseTimeoutRunsToItsEnd() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let url = try #require(db.databaseURL)
            let store = try PostgresStoreDatabase(url: url, maximumConnections: 1, leaseTimeout: .seconds(1), logger: TestDatabase.logger)
            try await warmUp(store)
            let rows = try await store.query("SELECT 7 AS seven FROM pg_sleep(1.5)")
            #expect(try rows.first?.int("seven") == 7)
            let committed = try await store.transaction { connection in
                try await connection.query("SELECT pg_sleep(1.5)")
                return try await connection.query("SELECT 8 AS eight").first?.int("eight")
            }
            #expect(committed == 8)
            await store.shutdown()
        }
    }
}
