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
final class DashboardSessions: Sendable {
    struct Session: Sendable {
        /// The admin token signed in with (in memory only).
        let token: String
        /// The value every state-changing form must send back.
        let csrf: String
        /// Epoch milliseconds after which the session is gone.
        let expiresAt: Int64
    }

    /// How long a session lasts from sign-in.
    let lifetime: Duration
    /// At most this many sessions; past it the one closest to expiry is dropped.
    let capacity: Int
    private let now: @Sendable () -> Int64
    private let sessions = Mutex<[String: Session]>([:])

    init(lifetime: Duration = .seconds(8 * 3600), capacity: Int = 10_000, now: @escaping @Sendable () -> Int64 = systemMillis) {
        self.lifetime = lifetime
        self.capacity = capacity
        self.now = now
    }

    /// A new session for `token`: its id (for the cookie) and the session.
    func open(token: String) -> (id: String, session: Session) {
        let id = Secret.generate()
        let time = now()
        let session = Session(token: token, csrf: Secret.generate(), expiresAt: time + lifetime.milliseconds)
        sessions.withLock { sessions in
            if sessions.count >= capacity {
                sessions = sessions.filter { $0.value.expiresAt > time }
                if sessions.count >= capacity, let oldest = sessions.min(by: { $0.value.expiresAt < $1.value.expiresAt }) {
                    sessions[oldest.key] = nil
                }
            }
            sessions[Secret.hash(id)] = session
        }
        return (id, session)
    }

    /// The live session whose id is `id`.
    func find(_ id: String) -> Session? {
        let key = Secret.hash(id)
        let time = now()
        return sessions.withLock { sessions in
            guard let session = sessions[key] else { return nil }
            guard session.expiresAt > time else {
                sessions[key] = nil
                return nil
            }
            return session
        }
    }

    /// Ends the session `id` (sign-out).
    func close(_ id: String) {
        let key = Secret.hash(id)
        _ = sessions.withLock { $0.removeValue(forKey: key) }
    }
}
