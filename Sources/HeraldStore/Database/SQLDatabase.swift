/// Runs statements: a database, or a connection inside a transaction.
public protocol SQLExecutor: Sendable {
    /// Runs one statement and returns its rows (none for a statement without results).
    @discardableResult
    func query(_ sql: SQL) async throws -> [SQLRow]
}

/// Which SQL engine is behind a database.
public enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// A database: SQLite or PostgreSQL behind one interface.
public protocol SQLDatabase: SQLExecutor {
    var dialect: SQLDialect { get }

    /// Where write loops (batchers, group commit) run, away from the request handlers.
    var writeExecutor: DedicatedExecutor { get }

    /// Runs `body` in one transaction, committed if it returns and rolled back if it throws.
    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> Result) async throws -> Result

    /// Closes connections; the database is unusable afterwards.
    func shutdown() async
}
