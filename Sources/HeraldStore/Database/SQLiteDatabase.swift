import Logging
import NIOCore
import SQLiteNIO
import Synchronization

/// The embedded backend: one SQLite file in WAL mode, one writer connection and a few readers.
///
/// SQLite allows one writer at a time; writes and transactions take turns on the writer
/// connection (in arrival order), while reads run in parallel on the reader connections.
public final class SQLiteStoreDatabase: SQLDatabase {
    public var dialect: SQLDialect { .sqlite }

    private let writer: SQLiteConnection
    private let readers: [SQLiteConnection]
    private let writeTurn = AsyncSemaphore(permits: 1)
    private let nextReader = Atomic<Int>(0)
    private let logger: Logger

    private init(writer: SQLiteConnection, readers: [SQLiteConnection], logger: Logger) {
        self.writer = writer
        self.readers = readers
        self.logger = logger
    }

    /// Opens (creating if needed) the database file at `path`.
    public static func open(path: String, readerCount: Int = 4, logger: Logger) async throws -> SQLiteStoreDatabase {
        let writer = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        // WAL lets readers run while the writer commits; synchronous=FULL makes each commit
        // durable against power loss, not just against a crash of the process.
        _ = try await writer.query("PRAGMA journal_mode=WAL")
        _ = try await writer.query("PRAGMA synchronous=FULL")
        _ = try await writer.query("PRAGMA foreign_keys=ON")
        var readers: [SQLiteConnection] = []
        for _ in 0..<max(1, readerCount) {
            let reader = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            _ = try await reader.query("PRAGMA foreign_keys=ON")
            _ = try await reader.query("PRAGMA query_only=ON")
            readers.append(reader)
        }
        return SQLiteStoreDatabase(writer: writer, readers: readers, logger: logger)
    }

    @discardableResult
    public func query(_ sql: SQL) async throws -> [SQLRow] {
        if Self.isReadOnly(sql.text) {
            let index = nextReader.wrappingAdd(1, ordering: .relaxed).oldValue
            return try await Self.run(sql, on: readers[abs(index) % readers.count])
        }
        return try await writeTurn.withPermit {
            try await Self.run(sql, on: writer)
        }
    }

    public func transaction<Result: Sendable>(_ body: @Sendable (any SQLExecutor) async throws -> Result) async throws -> Result {
        try await writeTurn.withPermit {
            let connection = Connection(connection: writer)
            try await Self.run("BEGIN IMMEDIATE", on: writer)
            do {
                let result = try await body(connection)
                try await Self.run("COMMIT", on: writer)
                return result
            } catch {
                do {
                    try await Self.run("ROLLBACK", on: writer)
                } catch {
                    logger.error("rollback failed", metadata: ["error": "\(error)"])
                }
                throw error
            }
        }
    }

    public func shutdown() async {
        for connection in readers + [writer] {
            try? await connection.close()
        }
    }

    // MARK: Helpers

    /// The writer connection inside a transaction.
    private struct Connection: SQLExecutor {
        let connection: SQLiteConnection

        func query(_ sql: SQL) async throws -> [SQLRow] {
            try await SQLiteStoreDatabase.run(sql, on: connection)
        }
    }

    static func isReadOnly(_ text: String) -> Bool {
        let head = text.drop(while: { $0 == " " || $0 == "\n" }).prefix(6).uppercased()
        return head == "SELECT"
    }

    @discardableResult
    static func run(_ sql: SQL, on connection: SQLiteConnection) async throws -> [SQLRow] {
        let binds = sql.binds.map(Self.sqliteData)
        let rows: [SQLiteRow]
        do {
            rows = try await connection.query(Self.placeholders(sql.text), binds)
        } catch let error as SQLiteError {
            throw Self.storeError(error)
        }
        guard let first = rows.first else { return [] }
        let names = first.columns.map(\.name)
        return rows.map { row in
            SQLRow(columns: names, values: row.columns.map { Self.value($0.data) })
        }
    }

    /// `$1` → `?1`: SQLite's numbered parameters.
    static func placeholders(_ text: String) -> String {
        guard text.contains("$") else { return text }
        return String(text.map { $0 == "$" ? "?" : $0 })
    }

    static func sqliteData(_ value: SQLValue) -> SQLiteData {
        switch value {
        case .null: .null
        case .int(let int): .integer(Int(int))
        case .double(let double): .float(double)
        case .text(let text): .text(text)
        case .blob(let bytes): .blob(ByteBuffer(bytes: bytes))
        }
    }

    static func value(_ data: SQLiteData) -> SQLValue {
        switch data {
        case .null: .null
        case .integer(let int): .int(Int64(int))
        case .float(let double): .double(double)
        case .text(let text): .text(text)
        case .blob(let buffer): .blob(Array(buffer.readableBytesView))
        }
    }

    static func storeError(_ error: SQLiteError) -> StoreError {
        switch error.reason {
        case .constraintUniqueFailed, .constraintPrimaryKeyFailed:
            StoreError(reason: .uniqueViolation, message: error.message)
        case .constraintForeignKeyFailed:
            StoreError(reason: .foreignKeyViolation, message: error.message)
        case .busy, .busyTimeout, .locked, .cantOpen:
            StoreError(reason: .unavailable, message: error.message)
        default:
            StoreError(reason: .unknown("\(error.reason)"), message: error.message)
        }
    }
}
