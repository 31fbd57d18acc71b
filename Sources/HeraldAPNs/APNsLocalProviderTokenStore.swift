import HeraldCore
import Synchronization

/// An `APNsProviderTokenStore` in this process's memory: for an APNs client that shares its
/// token with no other process (a benchmark, a test of the client alone).
package final class APNsLocalProviderTokenStore: APNsProviderTokenStore {
    private let stored = Mutex<APNsSharedProviderToken?>(nil)

    package init() {}

    package func renew(_ renew: @escaping @Sendable (APNsSharedProviderToken?) throws -> APNsSharedProviderToken) async throws
        -> APNsSharedProviderToken
    {
        try stored.withLock { stored in
            let token = try renew(stored)
            stored = token
            return token
        }
    }
}
