import HeraldAPNs
import HeraldCore
import HeraldFCM
import HeraldStore
import HeraldWNS
import HeraldWebPush
import struct Foundation.UUID

/// The provider clients of the platforms this process sends for: made on first use from the
/// platform's credentials, remade when the platform row changes (new credentials), and for APNs
/// the provider-token state.
actor Senders {
    private enum Kind {
        case apns(APNsClient, topic: String, generator: APNsTokenGenerator?, machine: APNsTokenStateMachine)
        case fcm(FCMClient)
        case webPush(VAPIDSigner)
        case wns(WNSClient)
    }

    private struct Entry {
        var kind: Kind
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

    /// What to do after a provider refused a platform's credentials in a batch.
    enum RejectionAction: Equatable {
        /// Try the refused devices again (a new provider token will be used).
        case retry
        /// Pause the platform: its credentials are failing.
        case markFailing
        /// The refusal concerns those devices only (a Web Push subscription made for another key).
        case failDevices
    }

    private let store: Store
    private let configuration: DeliveryConfiguration
    private let telemetry: DeliveryTelemetry
    private var entries: [UUID: Entry] = [:]
    /// One Web Push client for every web platform: the endpoints are the subscriptions'.
    private var webPushClient: WebPushClient?

    init(store: Store, configuration: DeliveryConfiguration, telemetry: DeliveryTelemetry = DeliveryTelemetry()) {
        self.store = store
        self.configuration = configuration
        self.telemetry = telemetry
    }

    /// The sender for `platformID` at `now` (epoch seconds).
    func lookup(_ platformID: UUID, now: Int64) async throws -> Lookup {
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
            guard let kind = try make(credentials) else { return .missing }
            if entries[platformID] == nil {
                entries[platformID] = Entry(kind: kind, madeFrom: platform.updatedAt)
            } else {
                // Another worker made one while this one waited: keep the first.
                await shutdown(kind)
            }
        }
        guard var entry = entries[platformID] else { return .missing }
        switch entry.kind {
        case .apns(let client, let topic, let generator?, var machine):
            switch machine.nextToken(now: now) {
            case .use(let token):
                return .ready(PlatformSender(metrics: telemetry.metrics, client: .apns(client, topic: topic, bearer: token)))
            case .sign(let issuedAt):
                let token = try generator.token(issuedAt: issuedAt)
                machine.signed(token, issuedAt: issuedAt)
                entry.kind = .apns(client, topic: topic, generator: generator, machine: machine)
                entries[platformID] = entry
                return .ready(PlatformSender(metrics: telemetry.metrics, client: .apns(client, topic: topic, bearer: token)))
            case .fail:
                return .failing
            }
        case .apns(let client, let topic, nil, _):
            return .ready(PlatformSender(metrics: telemetry.metrics, client: .apns(client, topic: topic, bearer: nil)))
        case .fcm(let client):
            return .ready(PlatformSender(metrics: telemetry.metrics, client: .fcm(client, notification: platform.fcmNotification)))
        case .webPush(let signer):
            return .ready(PlatformSender(metrics: telemetry.metrics, client: .webPush(try webPush(), signer)))
        case .wns(let client):
            return .ready(PlatformSender(metrics: telemetry.metrics, client: .wns(client)))
        }
    }

    private func make(_ credentials: PlatformCredentials) throws -> Kind? {
        let kind = try makeClient(credentials)
        switch kind {
        case .apns(let client, _, _, _)?: telemetry.connections.track(client)
        case .fcm(let client)?: telemetry.connections.track(client)
        case .wns?, .webPush?, nil: break
        }
        return kind
    }

    private func makeClient(_ credentials: PlatformCredentials) throws -> Kind? {
        switch credentials {
        case .apnsToken(let credentials):
            let endpoint = credentials.endpoint ?? configuration.apnsEndpoint ?? APNsClient.endpoint(for: credentials.environment)
            return .apns(
                try APNsClient(
                    endpoint: endpoint, extraTrustedCAPEM: trustedCAs(credentials.extraTrustedCAPEM), proxy: configuration.proxy),
                topic: credentials.topic, generator: try APNsTokenGenerator(credentials: credentials), machine: APNsTokenStateMachine())
        case .apnsCertificate(let credentials):
            let endpoint = credentials.endpoint ?? configuration.apnsEndpoint ?? APNsClient.endpoint(for: credentials.environment)
            return .apns(
                try APNsClient(
                    endpoint: endpoint, extraTrustedCAPEM: trustedCAs(credentials.extraTrustedCAPEM), clientCertificate: credentials,
                    proxy: configuration.proxy),
                topic: credentials.topic, generator: nil, machine: APNsTokenStateMachine())
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
                    extraTrustedCAPEM: configuration.extraTrustedCAPEM, proxy: configuration.proxy))
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

    /// A send went through: an APNs token that was refused once is trusted again.
    func accepted(_ platformID: UUID) {
        guard var entry = entries[platformID], case .apns(let client, let topic, let generator, var machine) = entry.kind else { return }
        machine.accepted()
        entry.kind = .apns(client, topic: topic, generator: generator, machine: machine)
        entries[platformID] = entry
    }

    /// The provider refused the platform's credentials for `refused` of the `sent` notifications
    /// of a batch.
    func rejected(_ platformID: UUID, now: Int64, refused: Int, sent: Int) -> RejectionAction {
        guard var entry = entries[platformID] else { return .markFailing }
        switch entry.kind {
        case .apns(let client, let topic, let generator?, var machine):
            let action = machine.rejected(now: now)
            entry.kind = .apns(client, topic: topic, generator: generator, machine: machine)
            entries[platformID] = entry
            switch action {
            case .retryWithNewToken, .retryAt: return .retry
            case .markFailing: return .markFailing
            }
        case .apns(_, _, nil, _):
            // A certificate APNs refuses will not get better by itself.
            return .markFailing
        case .fcm, .wns:
            // The client already fetched a fresh access token once before reporting this.
            return .markFailing
        case .webPush:
            // A push service refuses a subscription made for another VAPID key; only when it
            // refuses every one is the platform's key the problem.
            return refused == sent ? .markFailing : .failDevices
        }
    }

    /// Forgets the platform's sender (its credentials changed or failed).
    func reset(_ platformID: UUID) async {
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
        case .apns(let client, _, _, _):
            telemetry.connections.untrack(client)
            await client.shutdown()
        case .fcm(let client):
            telemetry.connections.untrack(client)
            try? await client.shutdown()
        case .wns(let client): try? await client.shutdown()
        case .webPush: break
        }
    }
}
