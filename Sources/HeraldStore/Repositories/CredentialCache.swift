import HeraldCore
import Synchronization

import struct Foundation.UUID

/// Remembers, for a second, the rows that authenticate requests (an app's api key hash, a
/// platform's secret hash), so that a busy device or backend does not cost a query per request.
///
/// The presented secret is still hashed and compared in constant time on every request; only
/// the database read is saved. A regeneration, update or delete in this process removes the entry
/// at once; another process sharing the database sees the change within `lifetime`.
final class CredentialCache<Value: Sendable>: Sendable {
    struct Entry: Sendable {
        let secretHash: String
        let value: Value
        let expiresAt: Int64
    }

    /// How long an entry is trusted, in milliseconds.
    let lifetime: Int64
    /// Entries kept at most; past that the cache starts over.
    let capacity: Int
    private let entries = Mutex<[UUID: Entry]>([:])

    init(lifetime: Int64 = 1000, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The cached row for `id`, if it is still fresh.
    func entry(_ id: UUID, now: Int64) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries[id] else { return nil }
            guard entry.expiresAt > now else {
                entries[id] = nil
                return nil
            }
            return entry
        }
    }

    func store(_ id: UUID, secretHash: String, value: Value, now: Int64) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[id] = Entry(secretHash: secretHash, value: value, expiresAt: now + lifetime)
        }
    }

    /// The value whose id and secret these are, from the cache or else from `load` (which
    /// returns the stored hash with the value); nil for an unknown id or a wrong secret.
    func authenticate(
        _ id: UUID, secret: String, now: Int64, load: () async throws -> (hash: String, value: Value)?
    ) async throws -> Value? {
        if let entry = entry(id, now: now) {
            return Secret.matches(secret, storedHash: entry.secretHash) ? entry.value : nil
        }
        guard let (hash, value) = try await load() else {
            // Spend the same work as a real check, so that timing does not tell which ids exist.
            _ = Secret.matches(secret, storedHash: String(repeating: "0", count: 64))
            return nil
        }
        store(id, secretHash: hash, value: value, now: now)
        return Secret.matches(secret, storedHash: hash) ? value : nil
    }

    func invalidate(_ id: UUID) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }
}
