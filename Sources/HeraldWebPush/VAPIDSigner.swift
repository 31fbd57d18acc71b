import Foundation
import HeraldCore
import Synchronization

/// A platform's VAPID identity: signs tokens and caches them per push service origin
/// (`VAPIDTokenCache`), on an injected clock. One per platform, shared by its sends.
package final class VAPIDSigner: Sendable {
    private let generator: VAPIDTokenGenerator
    private let clock: EpochClock
    private let cache = Mutex(VAPIDTokenCache())

    /// - Parameter clock: the wall clock; tokens carry its epoch seconds (`exp`), as JWTs count.
    package init(credentials: VAPIDCredentials, clock: EpochClock = .system) throws {
        self.generator = try VAPIDTokenGenerator(credentials: credentials)
        self.clock = clock
    }

    /// The uncompressed public key, base64url (`k`, the web app's `applicationServerKey`).
    package var publicKey: String { generator.publicKey }

    /// The `Authorization` header value for a request to `audience` (the push resource's origin).
    package func authorization(audience: String) throws -> String {
        let time = clock.now.epochSeconds
        let token = try cache.withLock { cache -> String in
            switch cache.token(for: audience, now: time) {
            case .use(let token):
                return token
            case .sign(let expiresAt):
                let token = try generator.token(audience: audience, expiresAt: expiresAt)
                cache.signed(token, for: audience, expiresAt: expiresAt, now: time)
                return token
            }
        }
        return generator.authorization(token: token)
    }

    /// The push service at `audience` refused the token: the next request signs a new one.
    package func rejected(audience: String) {
        cache.withLock { $0.rejected(audience: audience) }
    }
}
