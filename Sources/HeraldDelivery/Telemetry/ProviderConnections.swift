import HeraldAPNs
import HeraldFCM
import HeraldHTTP
import HeraldWebPush
import Synchronization

/// The provider clients alive in this process whose HTTP/2 connections can be counted (APNs,
/// FCM and Web Push, on HeraldHTTP's pools), so that a scrape can read how many are open.
///
/// WNS goes through async-http-client's HTTP/1.1 pool, which does not expose a count; for it the
/// requests in flight are counted instead (`herald_provider_requests_in_flight`).
package final class ProviderConnections: Sendable {
    /// The providers counted, as labelled in metrics.
    package static let providers = ["apns", "fcm", "webpush"]

    private struct Tracked: Sendable {
        let provider: String
        let count: @Sendable () -> Int
        let unreachable: @Sendable () -> ProviderConnectionError?
    }

    private let clients = Mutex<[ObjectIdentifier: Tracked]>([:])

    package init() {}

    func track(_ client: APNsClient) {
        track(client, provider: "apns", count: { client.openConnections }, unreachable: { client.unreachable })
    }

    func track(_ client: FCMClient) {
        track(client, provider: "fcm", count: { client.openConnections }, unreachable: { client.unreachable })
    }

    func track(_ client: WebPushClient) {
        track(client, provider: "webpush", count: { client.openConnections }, unreachable: { client.unreachable })
    }

    private func track(
        _ client: AnyObject, provider: String, count: @escaping @Sendable () -> Int,
        unreachable: @escaping @Sendable () -> ProviderConnectionError?
    ) {
        clients.withLock { $0[ObjectIdentifier(client)] = Tracked(provider: provider, count: count, unreachable: unreachable) }
    }

    func untrack(_ client: AnyObject) {
        clients.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(client)) }
    }

    /// Open connections of `provider` ("apns", "fcm", "webpush"), summed over its clients.
    package func open(_ provider: String) -> Int {
        clients.withLock { Array($0.values) }.filter { $0.provider == provider }.reduce(0) { $0 + $1.count() }
    }

    /// The providers whose last connection attempt failed, each with why (`/readyz`), sorted.
    package var unreachable: [(provider: String, error: ProviderConnectionError)] {
        clients.withLock { Array($0.values) }
            .compactMap { tracked in tracked.unreachable().map { (tracked.provider, $0) } }
            .sorted { ($0.provider, $0.error.description) < ($1.provider, $1.error.description) }
    }

    /// Open APNs connections, summed over every platform's client.
    package var openAPNsConnections: Int { open("apns") }
}
