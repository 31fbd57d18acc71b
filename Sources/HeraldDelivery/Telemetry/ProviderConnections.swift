import HeraldAPNs
import Synchronization

/// The provider clients alive in this process whose connections can be counted (APNs, with its
/// own HTTP/2 pool), so that a scrape can read how many connections are open.
///
/// FCM, Web Push and WNS go through AsyncHTTPClient's pool, which does not expose a count; for
/// them the requests in flight are counted instead (`herald_provider_requests_in_flight`).
public final class ProviderConnections: Sendable {
    private let apnsClients = Mutex<[ObjectIdentifier: APNsClient]>([:])

    public init() {}

    func track(_ client: APNsClient) {
        apnsClients.withLock { $0[ObjectIdentifier(client)] = client }
    }

    func untrack(_ client: APNsClient) {
        apnsClients.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(client)) }
    }

    /// Open APNs connections, summed over every platform's client.
    public var openAPNsConnections: Int {
        apnsClients.withLock { Array($0.values) }.reduce(0) { $0 + $1.openConnections }
    }
}
