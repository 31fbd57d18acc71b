import HeraldCore

/// Where one platform's current provider token is kept, so that every process sending for the
/// platform presents the same one.
///
/// Apple answers `TooManyProviderTokenUpdates` when a key's token changes more often than every
/// 20 minutes, and several Herald processes that each signed their own token would change it
/// with every connection they opened. `APNsProviderTokens` asks its store only when its cached
/// token is due for renewal or was refused; the store runs that decision under a lock every
/// process respects, so that one of them signs and the others take its token. HeraldDelivery
/// keeps the token in the database (`apns_provider_tokens`, sealed like the credentials);
/// `APNsLocalProviderTokenStore` keeps it in memory for a client on its own.
package protocol APNsProviderTokenStore: Sendable {
    /// Reads the stored token while holding the store's lock, passes it to `renew` (nil when
    /// there is none), keeps what `renew` returns in its place, and returns it. `renew` returns
    /// the stored token to reuse it, or signs a new one; what it throws, `renew(_:)` throws.
    func renew(_ renew: @escaping @Sendable (APNsSharedProviderToken?) throws -> APNsSharedProviderToken) async throws
        -> APNsSharedProviderToken
}
