import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
import Synchronization

/// The embedded backend: one SQLite file in WAL mode, one writer connection and a few readers.
///
/// SQLite allows one writer at a time, and a durable commit costs an fsync. Writes therefore go
/// through a group commit: transactions that arrive while one batch is being written wait for
/// the next batch, and each batch is one SQLite transaction with one fsync. A caller's
/// transaction returns only after the commit that contains it succeeded. If one body in a batch
/// fails, the batch is rolled back and its transactions are run again one by one, so that a
/// failure affects only its own transaction. Reads run in parallel on the reader connections.
package final class SQLiteStoreDatabase: SQLDatabase {
    package var dialect: SQLDialect { .sqlite }

    /// The most transactions one commit groups.
    static let maximumBatch = 512

    private let writer: SQLiteConnection
    private let readers: [SQLiteConnection]
    /// SQLite's calls block (an fsync on every commit): they run on threads of their own, so
    /// that a commit never holds up the event loops or the readers.
    private let threadPool: NIOThreadPool
    package let writeExecutor = DedicatedExecutor()
    private let nextReader = Atomic<Int>(0)
    private let queue = Mutex(WriteQueue())
    private let logger: Logger
    private let counter = StatementCounter()

    package var statementsExecuted: Int { counter.value }

    private struct WriteQueue {
        var pending: [PendingTransaction] = []
        var draining = false
    }

    /// A transaction waiting for its turn: `run` executes the body, `complete` answers the caller.
    private struct PendingTransaction: Sendable {
        let run: @Sendable (any SQLExecutor) async throws -> Void
        let complete: @Sendable ((any Error)?) -> Void
    }

    private init(writer: SQLiteConnection, readers: [SQLiteConnection], threadPool: NIOThreadPool, logger: Logger) {
        self.writer = writer
        self.readers = readers
        self.threadPool = threadPool
        self.logger = logger
    }

    /// Opens (creating if needed) the database file at `path`.
    package static func open(path: String, readerCount: Int = 4, logger: Logger) async throws -> SQLiteStoreDatabase {
        let threadPool = NIOThreadPool(numberOfThreads: max(1, readerCount) + 1)
        threadPool.start()
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let writer = try await SQLiteConnection.open(storage: .file(path: path), threadPool: threadPool, logger: logger, on: eventLoop)
        // WAL lets readers run while the writer commits; synchronous=FULL makes each commit
        // durable against power loss, not just against a crash of the process.
        _ = try await writer.query("PRAGMA journal_mode=WAL")
        _ = try await writer.query("PRAGMA synchronous=FULL")
        _ = try await writer.query("PRAGMA foreign_keys=ON")
        // The writer's page cache: 64 MiB instead of SQLite's 2 MiB, so that the pages a large
        // write touches at random (the `uuid` index of a million-device import) stay in memory
        // rather than being re-read and spilled to the WAL mid-transaction. Memory grows only
        // as pages are used.
        _ = try await writer.query("PRAGMA cache_size=-65536")
        // A multi-row statement inside a transaction keeps a statement journal (to undo just
        // that statement): in a temporary file by default, where its page copies cost a device
        // import a write(2) call each; in memory it is a copy.
        _ = try await writer.query("PRAGMA temp_store=MEMORY")
        // Checkpoint when the WAL holds 40 MiB rather than 4 MiB: a page that many commits
        // change (an index's, in a large import) is copied into the database file once per
        // checkpoint, so fewer checkpoints copy it fewer times. The WAL file grows to this.
        _ = try await writer.query("PRAGMA wal_autocheckpoint=10000")
        var readers: [SQLiteConnection] = []
        for _ in 0..<max(1, readerCount) {
            let reader = try await SQLiteConnection.open(storage: .file(path: path), threadPool: threadPool, logger: logger, on: eventLoop)
            _ = try await reader.query("PRAGMA foreign_keys=ON")
            _ = try await reader.query("PRAGMA query_only=ON")
            readers.append(reader)
        }
        return SQLiteStoreDatabase(writer: writer, readers: readers, threadPool: threadPool, logger: logger)
    }

    @discardableResult
    package func query(_ sql: SQL) async throws -> [SQLRow] {
        if sql.isSelect {
            let index = nextReader.wrappingAdd(1, ordering: .relaxed).oldValue
            counter.add()
            return try await Self.run(sql, on: readers[abs(index) % readers.count])
        }
        return try await transaction { connection in try await connection.query(sql) }
    }

    package func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> Result) async throws -> Result
    {
        let box = ResultBox<Result>()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let pending = PendingTransaction(
                run: { connection in box.set(try await body(connection)) },
                complete: { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                })
            let startDrain = queue.withLock { queue -> Bool in
                queue.pending.append(pending)
                guard !queue.draining else { return false }
                queue.draining = true
                return true
            }
            if startDrain {
                Task(executorPreference: writeExecutor) { await self.drain() }
            }
        }
        return try box.take()
    }

    package func shutdown() async {
        for connection in readers + [writer] {
            try? await connection.close()
        }
        try? await threadPool.shutdownGracefully()
        await writeExecutor.shutdown()
    }

    // MARK: Group commit

    private func drain() async {
        while true {
            let batch = queue.withLock { queue -> [PendingTransaction] in
                let batch = Array(queue.pending.prefix(Self.maximumBatch))
                queue.pending.removeFirst(batch.count)
                if batch.isEmpty { queue.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            if batch.count == 1 {
                await commitAlone(batch[0])
            } else {
                await commitTogether(batch)
            }
        }
    }

    /// One transaction, one commit.
    private func commitAlone(_ pending: PendingTransaction) async {
        let connection = Connection(connection: writer, counter: counter)
        do {
            try await control("BEGIN IMMEDIATE")
        } catch {
            pending.complete(error)
            return
        }
        do {
            try await pending.run(connection)
            try await control("COMMIT")
            pending.complete(nil)
        } catch {
            await rollback()
            pending.complete(error)
        }
    }

    /// Several transactions, one commit; if any fails, each runs again alone.
    private func commitTogether(_ batch: [PendingTransaction]) async {
        let connection = Connection(connection: writer, counter: counter)
        do {
            try await control("BEGIN IMMEDIATE")
        } catch {
            for pending in batch { pending.complete(error) }
            return
        }
        do {
            for pending in batch {
                try await pending.run(connection)
            }
            try await control("COMMIT")
        } catch {
            await rollback()
            for pending in batch {
                await commitAlone(pending)
            }
            return
        }
        for pending in batch { pending.complete(nil) }
    }

    private func rollback() async {
        do {
            try await control("ROLLBACK")
        } catch {
            logger.error("rollback failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Helpers

    /// The writer connection inside a transaction.
    private struct Connection: SQLExecutor {
        var dialect: SQLDialect { .sqlite }
        let connection: SQLiteConnection
        let counter: StatementCounter

        func query(_ sql: SQL) async throws -> [SQLRow] {
            counter.add()
            return try await SQLiteStoreDatabase.run(sql, on: connection)
        }
    }

    /// Runs a transaction-control statement on the writer, counted.
    private func control(_ sql: SQL) async throws {
        counter.add()
        try await Self.run(sql, on: writer)
    }

    @discardableResult
    static func run(_ sql: SQL, on connection: SQLiteConnection) async throws -> [SQLRow] {
        let binds = sql.binds.map(Self.sqliteData)
        let rows: [SQLiteRow]
        do {
            rows = try await connection.query(sql.text(for: .sqlite), binds)
        } catch let error as SQLiteError {
            throw Self.storeError(error)
        }
        guard let first = rows.first else { return [] }
        let names = first.columns.map(\.name)
        return rows.map { row in
            SQLRow(columns: names, values: row.columns.map { Self.value($0.data) })
        }
    }

    static func sqliteData(_ value: SQLValue) -> SQLiteData {
        switch value {
        case .null: .null
        case .int(let int): .integer(Int(int))
        case .double(let double): .float(double)
        case .text(let text): .text(text)
        case .blob(let bytes): .blob(ByteBuffer(bytes: bytes))
        case .integers(let integers): .text("[" + integers.map(String.init).joined(separator: ",") + "]")
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

/// Carries a transaction's result from the drain task back to its caller.
private final class ResultBox<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)

    func set(_ newValue: Value) {
        value.withLock { $0 = newValue }
    }

    func take() throws -> Value {
        guard let result = value.withLock({ $0.take() }) else {
            throw StoreError(reason: .unknown("transaction"), message: "the transaction finished without a result")
        }
        return result
    }
}
