import Synchronization

/// Runs statements: a database, or a connection inside a transaction.
package protocol SQLExecutor: Sendable {
    /// The engine the statements run on.
    var dialect: SQLDialect { get }

    /// Runs one statement and returns its rows (none for a statement without results).
    @discardableResult
    func query(_ sql: SQL) async throws -> [SQLRow]
}

/// Which SQL engine is behind a database.
package enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// A database: SQLite or PostgreSQL behind one interface.
package protocol SQLDatabase: SQLExecutor {
    /// Where write loops (batchers, group commit) run, away from the request handlers.
    var writeExecutor: DedicatedExecutor { get }

    /// Runs `body` in one transaction, committed if it returns and rolled back if it throws.
    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> Result) async throws -> Result

    /// Closes connections; the database is unusable afterwards.
    func shutdown() async

    /// Writes a batch of registrations in one statement (one round trip, an implicit
    /// transaction) where the backend has such a statement, and returns a row for each
    /// registration: its `position` in the batch (from 1), and the device's `id`, `uuid` and
    /// `created_at` (what the registration cannot know: `RegistrationBatcher.Request.answer`).
    /// Nil, having written nothing, when it has none (SQLite: its group commit already makes a
    /// transaction cheap) or when the batch must take the transactional path (a tag names an
    /// expired topic, whose old subscriptions must go first).
    func writeInOneStatement(_ batch: RegistrationBatch) async throws -> [SQLRow]?

    /// Statements this database has run since it opened (its transactions' BEGIN and COMMIT
    /// included): tests read it to show that an idle server asks the store nothing.
    var statementsExecuted: Int { get }

    /// Listens on a notification channel until the task is cancelled, calling `received` with
    /// each payload, and `onConnected` each time listening (re)starts. Where the backend has no
    /// notifications (SQLite), it returns at once.
    func listen(on channel: String, onConnected: @escaping @Sendable () -> Void, received: @escaping @Sendable (String) -> Void) async
}

extension SQLDatabase {
    package func writeInOneStatement(_ batch: RegistrationBatch) async throws -> [SQLRow]? { nil }

    package func listen(on channel: String, onConnected: @escaping @Sendable () -> Void, received: @escaping @Sendable (String) -> Void)
        async
    {
    }
}

/// Counts statements as they run (`SQLDatabase.statementsExecuted`).
final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ statements: Int = 1) {
        count.wrappingAdd(statements, ordering: .relaxed)
    }

    var value: Int { count.load(ordering: .relaxed) }
}
