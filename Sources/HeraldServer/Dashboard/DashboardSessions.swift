import HeraldCore
import HeraldStore
import Synchronization

/// The dashboard's signed-in sessions, held in this process's memory.
///
/// The browser's cookie carries only a random session id; the table is keyed by that id's
/// SHA-256, so the admin token never travels in a cookie. The session keeps the token the
/// operator signed in with, and every request checks it again through `Authenticator.admin(token:)`,
/// the admin API's own check: a token deleted meanwhile ends the session's access at once.
/// Sessions are per process (a restart signs everyone out), which suits a console for operators.
///
/// Bounded **per token**: each token keeps at most `perToken` sessions (its oldest makes room for
/// its newest), so one token signing in over and over only ends its own sessions, never another
/// token's. The whole table holds at most `capacity`; past it the expired go, then the oldest
/// session of the token holding the most.
final class DashboardSessions: Sendable {
    struct Session: Sendable {
        /// The admin token signed in with (in memory only).
        let token: String
        /// The value every state-changing form must send back.
        let csrf: String
        /// When the session is gone.
        let expiresAt: EpochClock.Instant
    }

    /// How long a session lasts from sign-in.
    let lifetime: Duration
    let capacity: Int
    let perToken: Int
    private let clock: EpochClock
    private let state = Mutex(Table())

    /// The sessions by the SHA-256 of their id, and each token's (by the token's SHA-256), oldest first.
    private struct Table {
        var sessions: [String: (session: Session, token: String)] = [:]
        var byToken: [String: [String]] = [:]

        mutating func remove(_ key: String) {
            guard let token = sessions.removeValue(forKey: key)?.token else { return }
            byToken[token]?.removeAll { $0 == key }
            if byToken[token]?.isEmpty == true { byToken[token] = nil }
        }

        mutating func removeExpired(at time: EpochClock.Instant) {
            for (key, entry) in sessions where entry.session.expiresAt <= time { remove(key) }
        }
    }

    init(lifetime: Duration = .seconds(8 * 3600), capacity: Int = 10_000, perToken: Int = 20, clock: EpochClock = .system) {
        self.lifetime = lifetime
        self.capacity = max(1, capacity)
        self.perToken = max(1, perToken)
        self.clock = clock
    }

    /// A new session for `token`: its id (for the cookie) and the session.
    func open(token: String) -> (id: String, session: Session) {
        let id = Secret.generate()
        let time = clock.now
        let session = Session(token: token, csrf: Secret.generate(), expiresAt: time.advanced(by: lifetime))
        let key = Secret.hash(id)
        let tokenKey = Secret.hash(token)
        state.withLock { table in
            // This token's own: its expired ones, then its oldest past `perToken`.
            for old in table.byToken[tokenKey] ?? [] where table.sessions[old].map({ $0.session.expiresAt <= time }) ?? true {
                table.remove(old)
            }
            while let mine = table.byToken[tokenKey], mine.count >= perToken { table.remove(mine[0]) }
            if table.sessions.count >= capacity {
                table.removeExpired(at: time)
                if table.sessions.count >= capacity, let busiest = table.byToken.max(by: { $0.value.count < $1.value.count }) {
                    table.remove(busiest.value[0])
                }
            }
            table.sessions[key] = (session, tokenKey)
            table.byToken[tokenKey, default: []].append(key)
        }
        return (id, session)
    }

    /// The live session whose id is `id`.
    func find(_ id: String) -> Session? {
        let key = Secret.hash(id)
        let time = clock.now
        return state.withLock { table in
            guard let entry = table.sessions[key] else { return nil }
            guard entry.session.expiresAt > time else {
                table.remove(key)
                return nil
            }
            return entry.session
        }
    }

    /// Ends the session `id` (sign-out).
    func close(_ id: String) {
        let key = Secret.hash(id)
        state.withLock { $0.remove(key) }
    }

    /// How many sessions are held (expired ones not yet dropped included).
    var count: Int { state.withLock { $0.sessions.count } }
}
