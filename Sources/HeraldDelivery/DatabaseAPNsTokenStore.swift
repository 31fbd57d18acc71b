import HeraldAPNs
import HeraldCore
import HeraldStore

import struct Foundation.UUID

/// One platform's APNs provider token kept in the database (`Store.apnsTokens`), so that every
/// process sending for the platform presents the same one (docs/ARCHITECTURE.md, "APNs provider
/// tokens").
struct DatabaseAPNsTokenStore: APNsProviderTokenStore {
    let tokens: APNsTokenRepository
    let platformID: UUID

    func renew(_ renew: @escaping @Sendable (APNsSharedProviderToken?) throws -> APNsSharedProviderToken) async throws
        -> APNsSharedProviderToken
    {
        try await tokens.renew(platformID: platformID, renew)
    }
}
