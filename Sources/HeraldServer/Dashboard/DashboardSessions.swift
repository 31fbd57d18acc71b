import HeraldCore
import HeraldStore

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
        /// When the session is gone.
        let expiresAt: EpochClock.Instant
    }

    /// How long a session lasts from sign-in.
    let lifetime: Duration
    private let clock: EpochClock
    /// By the SHA-256 of their id; at most `capacity`, past it the one closest to expiry is dropped.
    private let sessions: ExpiringMap<String, Session>

    init(lifetime: Duration = .seconds(8 * 3600), capacity: Int = 10_000, clock: EpochClock = .system) {
        self.lifetime = lifetime
        sessions = ExpiringMap(capacity: capacity)
        self.clock = clock
    }

    /// A new session for `token`: its id (for the cookie) and the session.
    func open(token: String) -> (id: String, session: Session) {
        let id = Secret.generate()
        let time = clock.now
        let session = Session(token: token, csrf: Secret.generate(), expiresAt: time.advanced(by: lifetime))
        sessions.modify(Secret.hash(id), at: time) { $0 = .init(value: session, expiresAt: session.expiresAt) }
        return (id, session)
    }

    /// The live session whose id is `id`.
    func find(_ id: String) -> Session? {
        sessions.entry(Secret.hash(id), at: clock.now)?.value
    }

    /// Ends the session `id` (sign-out).
    func close(_ id: String) {
        sessions.remove(Secret.hash(id))
    }
}
