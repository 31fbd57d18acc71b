import HeraldCore

import struct Foundation.UUID

/// The APNs provider token each token-auth platform's processes share (`apns_provider_tokens`):
/// one row per platform, the JWT sealed like the platform's credentials, replaced under a lock.
///
/// Apple answers `TooManyProviderTokenUpdates` when a key's token changes more often than every
/// 20 minutes; several processes that each signed their own would change it with every
/// connection. Each process caches the token and comes here only when it is due or refused.
package struct APNsTokenRepository: Sendable {
    let database: any SQLDatabase
    let secretBox: SecretBox
    let clock: EpochClock

    /// Reads the platform's stored token under a lock that other processes' `renew` calls wait
    /// for, passes it to `body` (nil when none is stored), stores what `body` returns in its
    /// place unless it is the stored one, and returns it.
    ///
    /// The lock: on PostgreSQL the row's, taken with `SELECT … FOR UPDATE` (the row is inserted
    /// empty first if missing, so that there is one to lock); on SQLite the single writer's,
    /// which the transaction holds from `BEGIN IMMEDIATE`.
    package func renew(
        platformID: UUID, _ body: @escaping @Sendable (APNsSharedProviderToken?) throws -> APNsSharedProviderToken
    ) async throws -> APNsSharedProviderToken {
        let secretBox = self.secretBox
        let time = clock.now.epochMilliseconds
        let lock = database.dialect == .postgres ? " FOR UPDATE" : ""
        let context = Self.context(platformID)
        return try await database.transaction { connection in
            try await connection.query(
                """
                INSERT INTO apns_provider_tokens (platform_id, key_fingerprint, token_sealed, issued_at, updated_at)
                VALUES (\(platformID), '', NULL, 0, \(time)) ON CONFLICT (platform_id) DO NOTHING
                """)
            let rows = try await connection.query(
                """
                SELECT key_fingerprint, token_sealed, issued_at FROM apns_provider_tokens
                WHERE platform_id = \(platformID)\(unsafeRaw: lock)
                """)
            var stored: APNsSharedProviderToken?
            if let row = rows.first, let sealed = try row.optionalBlob("token_sealed") {
                stored = APNsSharedProviderToken(
                    token: String(decoding: try secretBox.open(sealed, context: context), as: UTF8.self),
                    issuedAt: try row.int("issued_at"), keyFingerprint: try row.string("key_fingerprint"))
            }
            let token = try body(stored)
            if token != stored {
                try await connection.query(
                    """
                    UPDATE apns_provider_tokens SET key_fingerprint = \(token.keyFingerprint),
                        token_sealed = \(try secretBox.seal(Array(token.token.utf8), context: context)),
                        issued_at = \(token.issuedAt), updated_at = \(time)
                    WHERE platform_id = \(platformID)
                    """)
            }
            return token
        }
    }

    /// The sealed token's additional data: it opens only for its platform.
    static func context(_ platformID: UUID) -> String { "apns-provider-token:\(platformID.lowercasedString)" }
}
