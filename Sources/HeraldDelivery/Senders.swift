import HeraldAPNs
import HeraldCore
import HeraldFCM
import HeraldStore
import HeraldWNS
import HeraldWebPush
import ServiceLifecycle

import struct Foundation.UUID

/// The provider clients of the platforms this process sends for: made on first use from the
/// platform's credentials, remade when the platform row changes (new credentials). Each client
/// keeps its own credential state (OAuth2 access tokens; APNs provider tokens cached here and
/// shared with the other processes through the database).
actor Senders {
    private enum Kind {
        case apns(APNsPlatformClient)
        case fcm(FCMClient)
        case webPush(VAPIDSigner)
        case wns(WNSClient)
    }

    private struct Entry {
        let kind: Kind
        /// The platform row's `updatedAt` the entry was made from.
        let madeFrom: Int64
    }

    enum Lookup {
        case ready(PlatformSender)
        /// No credentials uploaded (or no provider for the platform's type yet): nothing can be sent.
        case missing
        /// The provider rejected the credentials: hold the work until they change.
        case failing
    }

    private let store: Store
    private let configuration: DeliveryConfiguration
    private let clock: EpochClock
    private let telemetry: DeliveryTelemetry
    private var entries: [UUID: Entry] = [:]
    /// Platforms whose provider has accepted a notification since their sender was made: their
    /// batches are sent without a probe round first (`DeliveryPlan.rounds`).
    private var accepting: Set<UUID> = []
    /// One Web Push client for every web platform: the endpoints are the subscriptions'.
    private var webPushClient: WebPushClient?

    /// - Parameter clock: the time APNs provider tokens are issued at.
    init(
        store: Store, configuration: DeliveryConfiguration, clock: EpochClock = .system, telemetry: DeliveryTelemetry = DeliveryTelemetry()
    ) {
        self.store = store
        self.clock = clock
        self.configuration = configuration
        self.telemetry = telemetry
    }

    /// The sender for `platformID`.
    func lookup(_ platformID: UUID) async throws -> Lookup {
        // One read per batch: the platform may have been deleted, paused or given new
        // credentials, here or by another process.
        guard let platform = try await store.platforms.find(id: platformID) else {
            await reset(platformID)
            return .missing
        }
        if platform.credentialsStatus == .failing { return .failing }
        if let entry = entries[platformID], entry.madeFrom != platform.updatedAt {
            await reset(platformID)
        }
        if entries[platformID] == nil {
            guard let credentials = try await store.platforms.credentials(id: platformID) else { return .missing }
            guard let kind = try make(credentials, platformID: platformID) else { return .missing }
            if entries[platformID] == nil {
                entries[platformID] = Entry(kind: kind, madeFrom: platform.updatedAt)
            } else {
                // Another worker made one while this one waited: keep the first.
                await shutdown(kind)
            }
        }
        guard let entry = entries[platformID] else { return .missing }
        let client: PlatformSender.Client
        switch entry.kind {
        case .apns(let apns): client = .apns(apns)
        case .fcm(let fcm): client = .fcm(fcm, notification: platform.fcmNotification)
        case .webPush(let vapid): client = .webPush(WebPushPlatformClient(client: try webPush(), vapid: vapid))
        case .wns(let wns): client = .wns(wns)
        }
        return .ready(PlatformSender(metrics: telemetry.metrics, client: client, accepting: accepting.contains(platformID)))
    }

    private func make(_ credentials: PlatformCredentials, platformID: UUID) throws -> Kind? {
        let kind = try makeClient(credentials, platformID: platformID)
        switch kind {
        case .apns(let apns)?: telemetry.connections.track(apns.client)
        case .fcm(let client)?: telemetry.connections.track(client)
        case .wns?, .webPush?, nil: break
        }
        return kind
    }

    private func makeClient(_ credentials: PlatformCredentials, platformID: UUID) throws -> Kind? {
        switch credentials {
        case .apnsToken(let credentials):
            let endpoint = credentials.endpoint ?? configuration.apnsEndpoint ?? APNsClient.endpoint(for: credentials.environment)
            return .apns(
                APNsPlatformClient(
                    client: try APNsClient(
                        endpoint: endpoint, extraTrustedCAPEM: trustedCAs(credentials.extraTrustedCAPEM), proxy: configuration.proxy,
                        shutdownGrace: configuration.shutdownGrace),
                    topic: credentials.topic,
                    tokens: APNsProviderTokens(
                        generator: try APNsTokenGenerator(credentials: credentials),
                        store: DatabaseAPNsTokenStore(tokens: store.apnsTokens, platformID: platformID), clock: clock)))
        case .apnsCertificate(let credentials):
            let endpoint = credentials.endpoint ?? configuration.apnsEndpoint ?? APNsClient.endpoint(for: credentials.environment)
            return .apns(
                APNsPlatformClient(
                    client: try APNsClient(
                        endpoint: endpoint, extraTrustedCAPEM: trustedCAs(credentials.extraTrustedCAPEM), clientCertificate: credentials,
                        proxy: configuration.proxy, shutdownGrace: configuration.shutdownGrace),
                    topic: credentials.topic, tokens: nil))
        case .fcm(let credentials):
            return .fcm(
                try FCMClient(
                    credentials: credentials, endpoint: configuration.fcmEndpoint ?? FCMClient.defaultEndpoint,
                    extraTrustedCAPEM: configuration.extraTrustedCAPEM, proxy: configuration.proxy))
        case .webPush(let credentials):
            return .webPush(try VAPIDSigner(credentials: credentials))
        case .wns(let credentials):
            return .wns(
                try WNSClient(
                    credentials: credentials, tokenEndpoint: configuration.wnsTokenEndpoint ?? WNSAccessTokenProvider.defaultTokenEndpoint,
                    endpointOverride: configuration.wnsEndpoint, allowedTestHost: configuration.wnsAllowedTestHost,
                    extraTrustedCAPEM: configuration.extraTrustedCAPEM, proxy: configuration.proxy,
                    concurrency: configuration.sendConcurrency, stopStarting: { Task.isShuttingDownGracefully }))
        }
    }

    /// The platform's extra CA and the process's, both trusted.
    private func trustedCAs(_ platformCA: String?) -> String? {
        let both = [platformCA, configuration.extraTrustedCAPEM].compactMap { $0 }
        return both.isEmpty ? nil : both.joined(separator: "\n")
    }

    private func webPush() throws -> WebPushClient {
        if let webPushClient { return webPushClient }
        let client = try WebPushClient(
            endpointOverride: configuration.webPushEndpoint, extraTrustedCAPEM: configuration.extraTrustedCAPEM,
            proxy: configuration.proxy)
        webPushClient = client
        telemetry.connections.track(client)
        return client
    }

    /// The platform's provider accepted a notification.
    func accepted(_ platformID: UUID) {
        if entries[platformID] != nil { accepting.insert(platformID) }
    }

    /// Forgets the platform's sender (its credentials changed or failed).
    func reset(_ platformID: UUID) async {
        accepting.remove(platformID)
        if let entry = entries.removeValue(forKey: platformID) {
            await shutdown(entry.kind)
        }
    }

    func shutdown() async {
        for entry in entries.values { await shutdown(entry.kind) }
        entries = [:]
        if let webPushClient {
            telemetry.connections.untrack(webPushClient)
            try? await webPushClient.shutdown()
        }
        webPushClient = nil
    }

    private func shutdown(_ kind: Kind) async {
        switch kind {
        case .apns(let apns):
            telemetry.connections.untrack(apns.client)
            await apns.client.shutdown()
        case .fcm(let client):
            telemetry.connections.untrack(client)
            try? await client.shutdown()
        case .wns(let client): try? await client.shutdown()
        case .webPush: break
        }
    }
}
