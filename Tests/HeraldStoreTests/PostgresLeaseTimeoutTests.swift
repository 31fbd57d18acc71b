import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// A query or transaction waits at most the lease timeout for a connection of the pool, then
/// fails with `StoreError` `.unavailable` (a 503), never for good; once it has a connection the
/// timeout no longer applies (a statement is never reported failed while the server runs it).
@Suite struct PostgresLeaseTimeoutTests {
    @Test(.timeLimit(.minutes(2)))
    func aQueryWaitingForABusyPoolFailsAsUnavailable() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            let url = try #require(db.databaseURL)
            let store = try PostgresStoreDatabase(url: url, maximumConnections: 1, leaseTimeout: .milliseconds(300), logger: TestDatabase.logger)
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
            let store = try PostgresStoreDatabase(url: url, maximumConnections: 2, leaseTimeout: .milliseconds(100), logger: TestDatabase.logger)
            let rows = try await store.query("SELECT 7 AS seven FROM pg_sleep(0.5)")
            #expect(try rows.first?.int("seven") == 7)
            let committed = try await store.transaction { connection in
                try await connection.query("SELECT pg_sleep(0.3)")
                return try await connection.query("SELECT 8 AS eight").first?.int("eight")
            }
            #expect(committed == 8)
            await store.shutdown()
        }
    }
}
