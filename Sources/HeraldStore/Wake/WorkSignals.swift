import Synchronization

import struct Foundation.UUID

/// Wakes the loops that sleep on due work (delivery workers, the scheduler, any later queue) when
/// work is added: in this process through each kind's `WorkSignal`, and on PostgreSQL in every
/// other process through `NOTIFY herald_work` (heard by `listen(_:)`).
///
/// Announcing is a hint, never the record: the work is already committed, and a sleeper that
/// misses a hint (the notification connection was down, the process crashed before it announced)
/// still finds the work at its next look at the store, at the latest after its safety poll.
package final class WorkSignals: Sendable {
    /// The PostgreSQL channel every process listens on.
    package static let channel = "herald_work"

    private let database: any SQLDatabase
    /// Identifies this process's announcements, so that it does not wake itself twice.
    private let instance = UUID().uuidString.lowercased()
    private let signals = Mutex<[WorkKind: WorkSignal]>([:])
    private let listenStarts = Atomic<Int>(0)

    package init(database: any SQLDatabase) {
        self.database = database
    }

    /// The signal of `kind` in this process (made on first use).
    package func signal(for kind: WorkKind) -> WorkSignal {
        signals.withLock { signals in
            if let signal = signals[kind] { return signal }
            let signal = WorkSignal()
            signals[kind] = signal
            return signal
        }
    }

    /// Wakes this process's sleepers on `kind` and, on PostgreSQL, every other process's. Call it
    /// after the commit that added the work (a notification sent inside the transaction would be
    /// needed only to make it atomic with the work, and the safety poll already covers a lost one).
    package func announce(_ kind: WorkKind) async {
        signal(for: kind).ring()
        guard database.dialect == .postgres else { return }
        // A failure loses a hint only; the listeners' safety poll finds the work.
        _ = try? await database.query("SELECT \(notification(kind))")
    }

    /// The PostgreSQL call that announces `kind` to the other processes, for a statement that
    /// adds work in the same round trip (a CTE); the caller then rings this process's sleepers
    /// with `ringHere(_:)`. PostgreSQL sends it when the statement's transaction commits.
    package func notification(_ kind: WorkKind) -> SQL {
        "pg_notify(\(Self.channel), \(kind.name + ":" + instance))"
    }

    /// Wakes this process's sleepers on `kind` only (the other processes were notified by the
    /// statement that added the work: `notification(_:)`).
    package func ringHere(_ kind: WorkKind) {
        signal(for: kind).ring()
    }

    /// Rings every signal: the notifications may have been missed (the listening connection was
    /// lost and opened again), so every sleeper looks at the store once.
    package func ringAll() {
        for signal in signals.withLock({ Array($0.values) }) { signal.ring() }
    }

    /// A notification heard on the channel: rings its kind, unless this process sent it (its
    /// sleepers were rung when it was announced).
    package func received(payload: String) {
        let parts = payload.split(separator: ":", maxSplits: 1)
        guard let name = parts.first, parts.count < 2 || parts[1] != instance else { return }
        signal(for: WorkKind(String(name))).ring()
    }

    /// How many times `listen` has started listening (PostgreSQL): tests wait for the first
    /// before they rely on another process's announcement reaching this one.
    package var listeningStarts: Int { listenStarts.load(ordering: .relaxed) }

    /// Listens for other processes' announcements until cancelled (PostgreSQL; on SQLite, where
    /// one process owns the file and rings its own signals, it returns at once).
    package func listen(onConnected: @escaping @Sendable () -> Void = {}) async {
        await database.listen(
            on: Self.channel,
            onConnected: { [self] in
                // Whatever was announced while no connection listened is looked for once.
                ringAll()
                listenStarts.wrappingAdd(1, ordering: .relaxed)
                onConnected()
            }, received: { [self] payload in received(payload: payload) })
    }
}
