import PostgresNIO

extension PostgresStoreDatabase {
    /// Sends a statement on `connection` from the connection's own event loop, having checked
    /// there, in the same turn of the loop, that the connection is still open; a closed one
    /// fails the statement as `StoreError` `.unavailable`.
    ///
    /// Why every statement goes this way: postgres-nio 1.33.2 writes each statement to its
    /// channel without a promise (`query`, `execute`, and `withTransaction`'s BEGIN and COMMIT).
    /// A channel that has closed no longer holds the handler that answers or fails statements, so
    /// a statement written to it is dropped, and its caller waits for good. The pool can hand out
    /// such a connection in the moment between the server ending the session and the pool
    /// learning of it: CI saw a query wait for ever that way during a PostgreSQL outage
    /// (`PostgresOutageTests`), and a worker that waits for ever stops delivering. A channel
    /// closes only on its event loop, which is `executor`'s thread (the pool's connections all
    /// live there): a check made there and followed in the same turn by the write cannot be
    /// overtaken by the close. The statement then reaches the handler, which answers it, or
    /// fails it when the connection ends.
    ///
    /// Callers already running on `executor` (the registration batcher) pay nothing; others hop
    /// to it and back, where postgres-nio would have hopped to the loop for the write anyway.
    static func send<Rows: Sendable>(
        on connection: PostgresConnection, from executor: DedicatedExecutor,
        _ statement: (PostgresConnection) async throws -> Rows
    ) async throws -> Rows {
        try await withTaskExecutorPreference(executor) {
            assert(connection.eventLoop.inEventLoop, "a pooled connection lives on the write executor's loop")
            guard !connection.isClosed else {
                throw StoreError(reason: .unavailable, message: "the database connection had closed")
            }
            return try await statement(connection)
        }
    }
}
