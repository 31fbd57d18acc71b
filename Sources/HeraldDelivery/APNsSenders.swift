import HeraldAPNs
import HeraldCore
import HeraldStore
import struct Foundation.UUID

/// One APNs connection pool and provider-token state per platform, made on first use.
actor APNsSenders {
    struct Sender {
        let client: APNsClient
        let topic: String
        let generator: APNsTokenGenerator?
        /// The platform row's `updatedAt` the sender was made from: an edit (new credentials)
        /// makes a new sender.
        let madeFrom: Int64
        var machine = APNsTokenStateMachine()
    }

    enum Lookup {
        case ready(client: APNsClient, topic: String, bearer: String?)
        /// No credentials uploaded: nothing can be sent.
        case missing
        /// The provider rejected the credentials: hold the work until they change.
        case failing
    }

    private let store: Store
    private let configuration: DeliveryConfiguration
    private var senders: [UUID: Sender] = [:]

    init(store: Store, configuration: DeliveryConfiguration) {
        self.store = store
        self.configuration = configuration
    }

    /// The client and a provider token for `platformID` at `now` (epoch seconds).
    func lookup(_ platformID: UUID, now: Int64) async throws -> Lookup {
        // One read per batch: the platform may have been deleted, paused or given new
        // credentials, here or by another process.
        guard let platform = try await store.platforms.find(id: platformID) else {
            await reset(platformID)
            return .missing
        }
        if platform.credentialsStatus == .failing { return .failing }
        if let sender = senders[platformID], sender.madeFrom != platform.updatedAt {
            await reset(platformID)
        }
        if senders[platformID] == nil {
            guard let made = try await makeSender(platformID, madeFrom: platform.updatedAt) else { return .missing }
            // Another worker may have made one while this one waited: keep the first.
            if senders[platformID] == nil {
                senders[platformID] = made
            } else {
                await made.client.shutdown()
            }
        }
        guard var sender = senders[platformID] else { return .missing }
        guard let generator = sender.generator else {
            return .ready(client: sender.client, topic: sender.topic, bearer: nil)
        }
        switch sender.machine.nextToken(now: now) {
        case .use(let token):
            return .ready(client: sender.client, topic: sender.topic, bearer: token)
        case .sign(let issuedAt):
            let token = try generator.token(issuedAt: issuedAt)
            sender.machine.signed(token, issuedAt: issuedAt)
            senders[platformID] = sender
            return .ready(client: sender.client, topic: sender.topic, bearer: token)
        case .fail:
            return .failing
        }
    }

    private func makeSender(_ platformID: UUID, madeFrom: Int64) async throws -> Sender? {
        switch try await store.platforms.credentials(id: platformID) {
        case .apnsToken(let credentials)?:
            let endpoint = configuration.apnsEndpoint ?? APNsClient.endpoint(for: credentials.environment)
            return Sender(
                client: try APNsClient(endpoint: endpoint, extraTrustedCAPEM: configuration.extraTrustedCAPEM),
                topic: credentials.topic, generator: try APNsTokenGenerator(credentials: credentials), madeFrom: madeFrom)
        case .apnsCertificate(let credentials)?:
            let endpoint = configuration.apnsEndpoint ?? APNsClient.endpoint(for: credentials.environment)
            return Sender(
                client: try APNsClient(
                    endpoint: endpoint, extraTrustedCAPEM: configuration.extraTrustedCAPEM, clientCertificate: credentials),
                topic: credentials.topic, generator: nil, madeFrom: madeFrom)
        default:
            return nil
        }
    }

    func accepted(_ platformID: UUID) {
        senders[platformID]?.machine.accepted()
    }

    /// APNs refused the provider token or certificate.
    func rejected(_ platformID: UUID, now: Int64) -> APNsTokenStateMachine.RejectionAction {
        guard var sender = senders[platformID] else { return .markFailing }
        guard sender.generator != nil else { return .markFailing }
        let action = sender.machine.rejected(now: now)
        senders[platformID] = sender
        return action
    }

    /// Forgets the platform's sender (its credentials changed or failed).
    func reset(_ platformID: UUID) async {
        if let sender = senders.removeValue(forKey: platformID) {
            await sender.client.shutdown()
        }
    }

    func shutdown() async {
        for sender in senders.values { await sender.client.shutdown() }
        senders = [:]
    }
}
