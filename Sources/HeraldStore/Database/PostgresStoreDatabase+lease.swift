import PostgresNIO
import Synchronization

extension PostgresStoreDatabase {
    /// Runs `body` on a connection of the pool, having waited at most `leaseTimeout` for one;
    /// past that it throws `StoreError` `.unavailable`.
    ///
    /// postgres-nio queues a request for a connection until one is free or can be opened and
    /// bounds that wait only with its circuit breaker (queued requests fail once connections have
    /// failed for 60 s and none is open, a time it does not let its client configure), and a
    /// request was seen waiting for good during an outage (`PostgresOutageTests`). What it does
    /// offer is cancelling a waiting request: so the wait races a timer, and the timer, if first,
    /// cancels it. Once a connection is in hand the bound no longer applies: `body` runs to its
    /// end (postgres-nio's queries cannot be cut off once sent; a statement or transaction that
    /// started is never reported failed by this bound while the server still runs it).
    func leased<Result: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let lease = LeaseWait()
        let limit = leaseTimeout
        let client = self.client
        return try await withThrowingTaskGroup(of: LeaseEvent<Result>.self) { group in
            group.addTask {
                do {
                    return .finished(
                        try await client.withConnection { connection in
                            // A connection that came as the timer ran out is given back unused.
                            guard lease.take() else { throw CancellationError() }
                            return try await body(connection)
                        })
                } catch {
                    switch lease.state {
                    case .leased: throw error
                    case .timedOut: throw Self.leaseTimedOut(limit)
                    // The pool refused the request itself (its circuit breaker, its shutdown).
                    case .waiting: throw StoreError(reason: .unavailable, message: "no database connection: \(error)")
                    }
                }
            }
            group.addTask {
                do {
                    try await Task.sleep(for: limit)
                    return .timerEnded
                } catch {
                    // Cancelled: the body finished first, or the caller was cancelled (the body
                    // then sees it as well).
                    return .timerCancelled
                }
            }
            while let event = try await group.next() {
                switch event {
                case .finished(let result):
                    group.cancelAll()
                    return result
                case .timerEnded:
                    if lease.timeOut() { group.cancelAll() }
                case .timerCancelled:
                    continue
                }
            }
            throw Self.leaseTimedOut(limit)
        }
    }

    static func leaseTimedOut(_ limit: Duration) -> StoreError {
        StoreError(reason: .unavailable, message: "no database connection became free within \(limit)")
    }
}

/// What `leased` waits for: the body's result, or the end of the lease timer.
private enum LeaseEvent<Result: Sendable>: Sendable {
    case finished(Result)
    case timerEnded
    case timerCancelled
}

/// Whether a lease came before its timer ran out: whichever of `take` and `timeOut` comes
/// first wins, once.
private final class LeaseWait: Sendable {
    enum State {
        case waiting, leased, timedOut
    }

    private let current = Mutex(State.waiting)

    var state: State { current.withLock { $0 } }

    /// The connection came: true unless the timer ran out first.
    func take() -> Bool { move(to: .leased) }

    /// The timer ran out: true unless the connection came first.
    func timeOut() -> Bool { move(to: .timedOut) }

    private func move(to next: State) -> Bool {
        current.withLock { state in
            guard case .waiting = state else { return false }
            state = next
            return true
        }
    }
}
