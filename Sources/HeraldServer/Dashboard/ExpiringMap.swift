import HeraldCore
import Synchronization

/// A map held in memory whose entries each live until an expiry (an instant of the wall clock) and of
/// which at most `capacity` are kept: when a new key would pass it, the expired entries go, and
/// then the one closest to expiry. The dashboard's sessions and sign-in throttle both keep one,
/// so that nothing a client sends can grow memory without bound.
final class ExpiringMap<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    struct Entry: Sendable {
        var value: Value
        /// From when the entry is gone.
        var expiresAt: EpochClock.Instant
    }

    let capacity: Int
    private let entries = Mutex<[Key: Entry]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The live entry for `key` at `time` (an expired one is removed).
    func entry(_ key: Key, at time: EpochClock.Instant) -> Entry? {
        modify(key, at: time) { $0 }
    }

    /// Runs `body` with the live entry for `key` (nil when there is none) and keeps what it
    /// leaves: a new entry, a changed one, or none. Returns what `body` returns.
    func modify<Result>(_ key: Key, at time: EpochClock.Instant, _ body: (inout Entry?) -> Result) -> Result {
        entries.withLock { entries in
            var current = entries[key].flatMap { $0.expiresAt > time ? $0 : nil }
            let result = body(&current)
            if let current {
                if entries[key] == nil, entries.count >= capacity { Self.evict(&entries, at: time, capacity: capacity) }
                entries[key] = current
            } else {
                entries[key] = nil
            }
            return result
        }
    }

    /// Removes `key`'s entry.
    func remove(_ key: Key) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    /// Makes room for one entry: the expired ones go, then the one closest to expiry.
    private static func evict(_ entries: inout [Key: Entry], at time: EpochClock.Instant, capacity: Int) {
        entries = entries.filter { $0.value.expiresAt > time }
        if entries.count >= capacity, let soonest = entries.min(by: { $0.value.expiresAt < $1.value.expiresAt }) {
            entries[soonest.key] = nil
        }
    }
}
