import struct Foundation.UUID

/// The row locks a transaction's `SELECT` takes on PostgreSQL before it decides on what it read
/// (docs/ARCHITECTURE.md, "Concurrency on PostgreSQL").
///
/// PostgreSQL runs transactions at READ COMMITTED: without a lock, a row read may be changed and
/// committed by another transaction before this one writes, and this one then writes back a
/// decision taken on the old row. SQLite needs none: a transaction holds its one writer from
/// `BEGIN IMMEDIATE` to the commit.
package enum RowLock: Sendable {
    /// `FOR UPDATE`: the row is about to be deleted, and the decision depends on rows that others
    /// add referencing it (their foreign key holds `keyShare` on it until they commit, so this
    /// waits for them, and later ones wait for this).
    case update
    /// `FOR NO KEY UPDATE`: the row is about to be changed (not its key), from what was read: the
    /// lock an `UPDATE` takes, taken before the read. Other edits wait; inserts of rows that
    /// reference it (a foreign key's `keyShare`) do not.
    case noKeyUpdate
    /// `FOR KEY SHARE`: the row must stay (not be deleted, nor its key changed) until the
    /// transaction ends; what a foreign key takes on the row it references.
    case keyShare
}

extension SQLDialect {
    /// The clause ending a `SELECT` that locks the rows it returns: `lock`'s on PostgreSQL,
    /// nothing on SQLite.
    package func rowLock(_ lock: RowLock) -> SQL {
        switch self {
        case .sqlite: ""
        case .postgres:
            switch lock {
            case .update: " FOR UPDATE"
            case .noKeyUpdate: " FOR NO KEY UPDATE"
            case .keyShare: " FOR KEY SHARE"
            }
        }
    }
}

/// A transaction-scoped advisory lock (PostgreSQL): serialises the transactions that work on
/// something no row stands for, or not yet (an insert-if-absent without a row to lock). Held
/// until the transaction ends; on SQLite nothing, as its one writer serialises every transaction.
enum AdvisoryLock {
    /// The app's pending geofence-update push: its audience is read, merged and written back,
    /// and its row may not exist yet (`GeofenceUpdateScheduler`).
    case geofenceUpdatePush(applicationID: UUID)
    /// A uuid an operator brings for an application or a platform: unique across both tables,
    /// which no constraint spans (`ApplicationRepository.requireUnusedIdentity`).
    case identity(UUID)

    /// The lock's name; PostgreSQL locks its 64-bit hash (two names sharing a hash only take
    /// turns).
    var name: String {
        switch self {
        case .geofenceUpdatePush(let applicationID): "herald.geofence-update-push:\(applicationID.lowercasedString)"
        case .identity(let id): "herald.identity:\(id.lowercasedString)"
        }
    }

    /// Takes the lock in `connection`'s transaction, waiting for a transaction that holds it.
    func take(on connection: any SQLExecutor) async throws {
        guard connection.dialect == .postgres else { return }
        try await connection.query("SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended(\(name), 0))")
    }
}
