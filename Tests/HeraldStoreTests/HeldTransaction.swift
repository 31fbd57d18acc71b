import Foundation
import HeraldStore
import HeraldTestSupport
import Synchronization
import Testing

/// A transaction a race test holds open, uncommitted, at its racing point: `body` has run and the
/// transaction waits until `commit()`. Meanwhile the test starts the concurrent one (`Racer`) and
/// waits until it either blocks on a lock this one holds or finishes without waiting (which, for
/// a check-then-act race, is the bug: it decided on what it read before this one committed).
///
/// PostgreSQL only: on SQLite a held transaction holds the single writer.
struct HeldTransaction<Result: Sendable>: Sendable {
    private let task: Task<Result, any Error>
    private let release: AsyncStream<Void>.Continuation

    /// Runs `body` in a transaction of `database` and returns once it has run (or failed).
    static func start(
        on database: any SQLDatabase, _ body: @escaping @Sendable (any SQLExecutor) async throws -> Result
    ) async -> HeldTransaction {
        let (ran, ranSignal) = AsyncStream<Void>.makeStream()
        let (released, releaseSignal) = AsyncStream<Void>.makeStream()
        let task = Task {
            defer { ranSignal.finish() }
            return try await database.transaction { connection in
                let result = try await body(connection)
                ranSignal.yield()
                for await _ in released { break }
                return result
            }
        }
        for await _ in ran { break }
        return HeldTransaction(task: task, release: releaseSignal)
    }

    /// Lets the transaction commit; returns what its body returned.
    func commit() async throws -> Result {
        release.yield()
        release.finish()
        return try await task.value
    }
}

/// The concurrent side of a race test: `operation`, started at once, and whether it has finished.
final class Racer<Result: Sendable>: Sendable {
    private final class Flag: Sendable {
        let done = Atomic(false)
    }

    private let flag: Flag
    private let task: Task<Result, any Error>

    init(_ operation: @escaping @Sendable () async throws -> Result) {
        let flag = Flag()
        self.flag = flag
        self.task = Task {
            defer { flag.done.store(true, ordering: .releasing) }
            return try await operation()
        }
    }

    var finished: Bool { flag.done.load(ordering: .acquiring) }

    /// Its outcome.
    var value: Result {
        get async throws { try await task.value }
    }

    /// Polls until a session of `db` waits for a lock (the racer reached the held transaction's
    /// rows) or the racer has finished without waiting; at most a minute, which fails the test.
    func waitUntilBlockedOrFinished(in db: TestDatabase) async throws {
        let end = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < end {
            if finished { return }
            let waiting = try await db.database.query(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
            if try waiting.first?.int("n") ?? 0 > 0 { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the racing transaction neither waited for a lock nor finished within a minute")
    }
}
