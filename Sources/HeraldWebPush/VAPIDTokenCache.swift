/// When to sign a new VAPID token, per push service origin.
///
/// A VAPID token names one origin (`aud`) and may expire at most 24 hours after the request
/// (RFC 8292 §2). The cache signs tokens for 12 hours and reuses each until less than an hour
/// is left, so a push service sees a new token about every 11 hours. A token the push service
/// refused is dropped, so the next request signs another.
package struct VAPIDTokenCache: Sendable {
    /// How long a new token is valid (seconds): well inside the 24-hour limit.
    package static let lifetime: Int64 = 12 * 3600
    /// Sign a new token when less than this is left (seconds).
    package static let renewalMargin: Int64 = 3600

    /// What the caller should do to get a token for a request.
    package enum Action: Sendable, Equatable {
        /// Use this cached token.
        case use(String)
        /// Sign a token expiring at this time (epoch seconds) and report it with `signed(_:for:expiresAt:now:)`.
        case sign(expiresAt: Int64)
    }

    private struct Entry: Sendable {
        var token: String
        var expiresAt: Int64
    }

    private var tokens: [String: Entry] = [:]

    package init() {}

    /// The token for a request to `audience` (an origin) at `now` (epoch seconds).
    package func token(for audience: String, now: Int64) -> Action {
        if let entry = tokens[audience], Self.reusable(entry, now: now) { return .use(entry.token) }
        return .sign(expiresAt: now + Self.lifetime)
    }

    /// Records a freshly signed token, and forgets tokens that would not be reused any more.
    package mutating func signed(_ token: String, for audience: String, expiresAt: Int64, now: Int64) {
        tokens = tokens.filter { Self.reusable($0.value, now: now) }
        tokens[audience] = Entry(token: token, expiresAt: expiresAt)
    }

    /// The push service at `audience` refused the token (401 or 403): sign a new one next time.
    package mutating func rejected(audience: String) {
        tokens[audience] = nil
    }

    /// The VAPID key changed: forget every token.
    package mutating func reset() {
        tokens.removeAll()
    }

    /// How many origins have a token, for tests.
    package var count: Int { tokens.count }

    /// More than the margin left, and not more than a lifetime (a clock that stepped back
    /// would otherwise make a token look valid for over 24 hours).
    private static func reusable(_ entry: Entry, now: Int64) -> Bool {
        let left = entry.expiresAt - now
        return left > renewalMargin && left <= lifetime
    }
}
