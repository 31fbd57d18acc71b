import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Synchronization
import Testing

/// A PostgreSQL server that goes away (restarted, failed over, the database dropped) must cost
/// Herald the queries made meanwhile, never the process: queries fail with a typed error while
/// no connection can be made, and succeed again once the server is back.
@Suite struct PostgresOutageTests {
    /// Queries made while no connection can be opened wait for one and fail with
    /// `StoreError` `.unavailable`: at once, or at the store's lease timeout (here 5 s; before it,
    /// only postgres-nio's circuit breaker ended the wait, after 60 s, with its own untyped error,
    /// and one query was seen to wait for good). Each is still awaited for 90 s at most, so that a
    /// wait the bound did not end is reported as such rather than hanging the run.
    @Test(.timeLimit(.minutes(5)))
    func queriesFailWhileTheServerRefusesConnectionsAndWorkAgainAfter() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db async throws in
            guard let url = db.databaseURL, let name = URLComponents(string: url)?.path.dropFirst() else {
                Issue.record("a PostgreSQL test database has a URL")
                return
            }
            // The outage is made from the server's maintenance database, outside the pools that
            // see it.
            guard let adminURL = ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_URL"] else {
                Issue.record("HERALD_TEST_POSTGRES_URL names the test server")
                return
            }
            let admin = try PostgresStoreDatabase(url: adminURL, maximumConnections: 1, logger: TestDatabase.logger)
            let store = try PostgresStoreDatabase(url: url, maximumConnections: 4, leaseTimeout: .seconds(5), logger: TestDatabase.logger)
            // Every connection of the pool is open and has served a query.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { try await store.query("SELECT pg_sleep(0.05)") } }
                try await group.waitForAll()
            }

            // The outage: no new connection is accepted, and the open ones are ended.
            try await admin.query(SQL(unsafeText: "ALTER DATABASE \(name) ALLOW_CONNECTIONS false"))
            try await admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(String(name)) AND pid <> pg_backend_pid()")

            // Queries during the outage fail (several at once, as a server's workers make them).
            let outcomes = await withTaskGroup(of: String.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        do {
                            try await abandoning(after: .seconds(90)) { try await store.query("SELECT 1") }
                            return "succeeded"
                        } catch let error as StoreError where error.reason == .unavailable {
                            return "unavailable"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes == Array(repeating: "unavailable", count: 6))

            // The server comes back: queries work again within a bounded time.
            try await admin.query(SQL(unsafeText: "ALTER DATABASE \(name) ALLOW_CONNECTIONS true"))
            let deadline = ContinuousClock.now + .seconds(120)
            var recovered = false
            while ContinuousClock.now < deadline, !recovered {
                do {
                    let rows = try await abandoning(after: .seconds(10)) { try await store.query("SELECT 1 AS one") }
                    recovered = try rows.first?.int("one") == 1
                } catch {
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            #expect(recovered)
            // … and several at once, as before the outage: the pool opens its connections again.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { try await store.query("SELECT pg_sleep(0.05)") } }
                try await group.waitForAll()
            }
            await store.shutdown()
            await admin.shutdown()
        }
    }
}

private struct Abandoned: Error {}

/// The result of `operation`, or `Abandoned` after `limit`, whichever comes first. Unlike a task
/// group, it does not wait for an operation that ignores cancellation: such an operation is left
/// running, unobserved.
private func abandoning<T: Sendable>(after limit: Duration, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let settled = Mutex(false)
    return try await withCheckedThrowingContinuation { continuation in
        let settle: @Sendable (Result<T, any Error>) -> Void = { result in
            guard settled.withLock({ done in defer { done = true }; return !done }) else { return }
            continuation.resume(with: result)
        }
        let work = Task {
            do {
                settle(.success(try await operation()))
            } catch {
                settle(.failure(error))
            }
        }
        Task {
            try? await Task.sleep(for: limit)
            work.cancel()
            settle(.failure(Abandoned()))
        }
    }
}
