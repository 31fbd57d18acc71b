import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

import struct Foundation.URLComponents

/// The shared backend: a PostgreSQL server reached through postgres-nio's connection pool.
package final class PostgresStoreDatabase: SQLDatabase {
    package var dialect: SQLDialect { .postgres }

    let client: PostgresClient
    /// The longest a query or transaction waits for a connection of the pool (`leased`).
    let leaseTimeout: Duration
    package let writeExecutor: DedicatedExecutor
    private let runTask: Task<Void, Never>
    private let logger: Logger
    private let counter = StatementCounter()

    package var statementsExecuted: Int { counter.value }

    /// Connects to `url` (`postgres://user:password@host:port/database?sslmode=disable|prefer|require`).
    ///
    /// - Parameter leaseTimeout: how long a query or transaction waits for a connection (all in
    ///   use, or none can be opened) before it fails with `StoreError` `.unavailable`.
    package init(url: String, maximumConnections: Int = 20, leaseTimeout: Duration = defaultLeaseTimeout, logger: Logger) throws {
        var configuration = try Self.configuration(url: url)
        // One connection stays open and none is pinged; the others open on demand and close
        // after `idleConnectionLifetime` without a query.
        //
        // Why not all of them open (minimum = maximum), as before: postgres-nio 1.33 assumes the
        // pool never holds fewer connections than its minimum when it opens one on demand
        // (`precondition(minimumConcurrentConnections <= stats.active)`), but while the server
        // refuses connections (restarted, overloaded, the database dropped) it keeps only one
        // attempt alive and forgets the rest, so a query made after such a gap can stop the
        // process (seen once in the whole test suite, from a `/metrics` scrape of a server whose
        // connections had been ended). With a minimum of one, the attempt it keeps is enough.
        //
        // Why a short idle lifetime: postgres-nio arms an idle timer each time a connection
        // above the minimum goes back to the pool. Each is a `Task.sleep`, and swift 6.3 on
        // Linux keeps a cancelled sleep's memory until its deadline (heaptrack: 50–70 bytes per
        // registration, all of it the pool's sleeps). The memory held is that rate times the
        // timeout: ten seconds keeps it a sixth of the default 60 s (≈ 7 MiB at 10,000
        // registrations a second), and is still far longer than the gaps between the queries
        // of a busy server.
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 1
        configuration.options.connectionIdleTimeout = Self.idleConnectionLifetime
        configuration.options.keepAliveBehavior = nil
        // No JIT compilation: Herald's statements each read a page or a row, and the planner's
        // cost estimates for a fan-out page with an audience expression (its row filters' guessed
        // selectivity) pass `jit_above_cost`, so PostgreSQL compiled each such page, the
        // compilation taking many times the execution (EXPLAIN ANALYZE, docs/benchmarks-history.md).
        configuration.options.additionalStartupParameters.append(("jit", "off"))
        // Connections get an event loop of their own: on the server's loops, each database
        // round trip would wait behind the HTTP traffic. It is the write executor's thread, so
        // that the registration batcher's drain loop, which runs there, goes on after each round
        // trip without a hop to another thread.
        let writeExecutor = DedicatedExecutor()
        let client = PostgresClient(configuration: configuration, eventLoopGroup: writeExecutor.group, backgroundLogger: logger)
        self.writeExecutor = writeExecutor
        self.client = client
        self.leaseTimeout = leaseTimeout
        self.logger = logger
        // The pool lives as long as this object: `shutdown()` ends it.
        // Started at once on this thread, so that run() has begun before the first query leases
        // a connection (postgres-nio warns about a lease before run(), and the lease then waits).
        self.runTask = Task.immediate { await client.run() }
    }

    /// How long a connection above the first stays open without a query.
    static let idleConnectionLifetime: Duration = .seconds(10)

    /// How long a query waits for a connection by default: far longer than any wait of a
    /// healthy pool (milliseconds, even with every connection busy), and short enough that a
    /// request during an outage gets its 503 while the client still waits. Each query arms a
    /// timer this long, and a cancelled `Task.sleep` keeps its memory until its deadline on
    /// Linux (see `idleConnectionLifetime`): the memory held is the query rate times this.
    package static let defaultLeaseTimeout: Duration = .seconds(10)

    @discardableResult
    package func query(_ sql: SQL) async throws -> [SQLRow] {
        counter.add()
        do {
            return try await leased { [logger, writeExecutor] connection in
                let query = Self.postgresQuery(sql)  // encoded here, not on the connections' loop
                let rows = try await Self.send(on: connection, from: writeExecutor) { try await $0.query(query, logger: logger) }
                return try await Self.collect(rows)
            }
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    /// Runs `body` in a transaction. PostgreSQL aborts one of two transactions that wait on each
    /// other (a deadlock, 40P01) or that it cannot serialise (40001); the aborted one was rolled
    /// back whole, so it runs again, up to `transactionAttempts` times in all.
    package func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> Result) async throws -> Result
    {
        var attempt = 1
        while true {
            do {
                return try await transactionOnce(body)
            } catch let error as StoreError where Self.isTransient(error) && attempt < Self.transactionAttempts {
                logger.debug("transaction retried", metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                attempt += 1
            }
        }
    }

    static let transactionAttempts = 3

    static func isTransient(_ error: StoreError) -> Bool {
        error.reason == .unknown("40P01") || error.reason == .unknown("40001")
    }

    private func transactionOnce<Result: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) async throws -> Result) async throws
        -> Result
    {
        counter.add(2)  // BEGIN and COMMIT (or ROLLBACK)
        do {
            // BEGIN, COMMIT and ROLLBACK are sent as every other statement (`send`), which is
            // why this is not postgres-nio's `withTransaction`.
            return try await leased { [counter, logger, writeExecutor] connection in
                let session = Connection(connection: connection, logger: logger, counter: counter, executor: writeExecutor)
                try await session.control("BEGIN")
                let result: Result
                do {
                    result = try await body(session)
                } catch {
                    // A connection that cannot even roll back is closed rather than given back
                    // to the pool inside a transaction.
                    do { try await session.control("ROLLBACK") } catch { try? await connection.close() }
                    throw error
                }
                // A failed COMMIT (a serialisation failure is then retried whole, like any other)
                // has ended the transaction on the server.
                try await session.control("COMMIT")
                return result
            }
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    /// Holds one of the pool's connections for `LISTEN channel` until the task is cancelled. A
    /// lost connection is replaced after a pause that doubles from 100 ms up to 5 s; each
    /// (re)start calls `onConnected` once PostgreSQL has taken the `LISTEN`.
    package func listen(
        on channel: String, onConnected: @escaping @Sendable () -> Void, received: @escaping @Sendable (String) -> Void
    ) async {
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled {
            let started = ContinuousClock.now
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        onConnected()
                        for try await notification in notifications {
                            received(notification.payload)
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning(
                    "listening for other processes' work failed; listening again shortly",
                    metadata: ["channel": "\(channel)", "error": "\(error)"])
            }
            // A connection that listened a while was fine: the next failure starts over.
            if ContinuousClock.now - started > .seconds(10) { pause = .milliseconds(100) }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(5))
        }
    }

    package func shutdown() async {
        runTask.cancel()
        await runTask.value
        await writeExecutor.shutdown()
    }

    // MARK: Helpers

    private struct Connection: SQLExecutor {
        var dialect: SQLDialect { .postgres }
        let connection: PostgresConnection
        let logger: Logger
        let counter: StatementCounter
        let executor: DedicatedExecutor

        func query(_ sql: SQL) async throws -> [SQLRow] {
            counter.add()
            do {
                let query = PostgresStoreDatabase.postgresQuery(sql)  // encoded here, not on the connections' loop
                let rows = try await PostgresStoreDatabase.send(on: connection, from: executor) {
                    try await $0.query(query, logger: logger)
                }
                return try await PostgresStoreDatabase.collect(rows)
            } catch let error as PSQLError {
                throw PostgresStoreDatabase.storeError(error)
            }
        }

        /// BEGIN, COMMIT or ROLLBACK (counted by the transaction).
        func control(_ statement: String) async throws {
            try await PostgresStoreDatabase.send(on: connection, from: executor) {
                try await $0.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    static func configuration(url: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty
        else {
            throw StoreError(
                reason: .unknown("configuration"), message: "the database URL must look like postgres://user:password@host:5432/database")
        }
        let sslmode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "prefer"
        let tls: PostgresClient.Configuration.TLS
        switch sslmode {
        case "disable": tls = .disable
        case "require", "verify-full", "verify-ca": tls = .require(.makeClientConfiguration())
        default: tls = host == "127.0.0.1" || host == "localhost" ? .disable : .prefer(.makeClientConfiguration())
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        var configuration = PostgresClient.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: components.percentEncodedUser.flatMap { $0.removingPercentEncoding } ?? "postgres",
            password: components.percentEncodedPassword.flatMap { $0.removingPercentEncoding },
            database: database.isEmpty ? nil : database,
            tls: tls)
        // What `pg_stat_activity` shows as the connections' application: `herald`, or the URL's
        // `application_name`, as libpq reads it.
        let applicationName = components.queryItems?.first(where: { $0.name == "application_name" })?.value ?? "herald"
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return configuration
    }

    /// Runs a statement that each connection prepares once (parsed and planned once, not per
    /// execution): for the hottest statements, whose text never changes.
    func execute<Statement: PostgresPreparedStatement>(prepared statement: Statement) async throws -> [SQLRow]
    where Statement.Row == PostgresRow {
        counter.add()
        do {
            return try await leased { [logger, writeExecutor] connection in
                let rows = try await Self.send(on: connection, from: writeExecutor) { try await $0.execute(statement, logger: logger) }
                return try await Self.collect(rows)
            }
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    static func postgresQuery(_ sql: SQL) -> PostgresQuery {
        PostgresQuery(unsafeSQL: sql.text(for: .postgres), binds: bindings(sql.binds))
    }

    static func bindings(_ values: [SQLValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .int(let int): bindings.append(int)
            case .double(let double): bindings.append(double)
            case .text(let text): bindings.append(text)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            case .integers(let integers): bindings.append(integers)
            }
        }
        return bindings
    }

    static func collect<Rows: AsyncSequence>(_ rows: Rows) async throws -> [SQLRow] where Rows.Element == PostgresRow {
        var result: [SQLRow] = []
        var names: [String]?
        for try await row in rows {
            let columns = names ?? row.map(\.columnName)
            names = columns
            result.append(try Self.row(row, names: columns))
        }
        return result
    }

    static func row(_ row: PostgresRow, names: [String]) throws -> SQLRow {
        var values: [SQLValue] = []
        values.reserveCapacity(row.count)
        for cell in row {
            values.append(try value(cell))
        }
        return SQLRow(columns: names, values: values)
    }

    static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard let bytes = cell.bytes else { return .null }
        // The two kinds nearly every row holds, read straight from their bytes: `decode` goes
        // through a generic decoding context for each cell, which a fan-out pays for every row.
        // Text is its UTF-8 in either format; a binary int8 is 8 bytes in network order.
        switch (cell.dataType, cell.format) {
        case (.text, _), (.varchar, _):
            return .text(String(buffer: bytes))
        case (.int8, .binary):
            if bytes.readableBytes == 8, let integer = bytes.getInteger(at: bytes.readerIndex, as: Int64.self) { return .int(integer) }
        default:
            break
        }
        switch cell.dataType {
        case .int2, .int4, .int8, .oid: return .int(try cell.decode(Int64.self))
        case .bool: return .int(try cell.decode(Bool.self) ? 1 : 0)
        case .float4, .float8: return .double(try cell.decode(Double.self))
        case .numeric: return .double(Double(try cell.decode(String.self)) ?? 0)
        case .bytea: return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
        default: return .text(try cell.decode(String.self))
        }
    }

    static func storeError(_ error: PSQLError) -> StoreError {
        let state = error.serverInfo?[.sqlState]
        let message = error.serverInfo?[.message] ?? "\(error.code)"
        switch state {
        case "23505": return StoreError(reason: .uniqueViolation, message: message)
        case "23503": return StoreError(reason: .foreignKeyViolation, message: message)
        case nil: return StoreError(reason: .unavailable, message: "\(error.code)")
        case let state? where endsTheSession(state): return StoreError(reason: .unavailable, message: message)
        case let state?: return StoreError(reason: .unknown(state), message: message)
        }
    }

    /// Whether `state` says the server ended or refused this session rather than failed the
    /// statement: class 08 (connection exception), 57P01–57P05 (shut down, crashed, not accepting
    /// connections yet, database dropped, idle session ended) and 53300 (too many connections).
    /// A query that meets one was never the cause; it is a database outage, like a connection
    /// that cannot be opened. (57014, a cancelled statement, is the statement's own failure.)
    static func endsTheSession(_ state: String) -> Bool {
        state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300"
    }
}
