import Crypto
import Foundation
import HeraldCore
import HeraldDelivery
import HeraldMocks
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// The delivery engine in this process on a fresh database — an app with an iOS platform
/// (token auth), the API's router and the workers — sending to the mock APNs over real TLS.
struct DeliveryWorld: Sendable {
    /// How the workers are set up; small batches so that a few devices make several jobs.
    struct Options: Sendable {
        var batchSize = 2
        var workers = 4
        var maximumAttempts = 5
        var sendConcurrency = 100
        var firstRetryDelay: Duration = .seconds(1)
        var unreachableRetryWindow: Duration = .seconds(86_400)
        /// The workers' safety poll (the longest they sleep without looking at the queue).
        var idlePoll: Duration = .milliseconds(10)
        /// The metrics registry, activity logs and log sensitivity of the workers and the API.
        var observability = Observability()
        /// The logger of the workers and the API (a capturing one in the log tests).
        var logger = TestDatabase.logger
        /// `.live` for a test that needs a socket (server-sent events).
        var setup: TestingSetup = .router
        /// The store's and the workers' clock: the system's unless a test moves it.
        var clock: EpochClock = .system
    }

    /// The key id the platform's .p8 is uploaded with, and the mock knows.
    static let keyID = "ABC123DEFG"

    let db: TestDatabase
    let mock: MockAPNsServer
    let fixture: Fixture
    /// The workers' configuration (for a test that runs workers of its own).
    let configuration: DeliveryConfiguration

    /// Runs `body` with the world, then stops the workers, the database and the mock.
    static func run(
        _ backend: Backend, _ options: Options = Options(),
        _ body: @escaping @Sendable (DeliveryWorld, any TestClientProtocol) async throws -> Void
    ) async throws {
        let (mock, key, configuration) = try await startMock()
        do {
            try await withTestDatabase(backend, clock: options.clock) { db async throws in
                let fixture = try await iOSFixture(db.store, key: key)
                var configuration = configuration
                configuration.idlePoll = options.idlePoll
                configuration.batchSize = options.batchSize
                configuration.workers = options.workers
                configuration.maximumAttempts = options.maximumAttempts
                configuration.sendConcurrency = options.sendConcurrency
                configuration.firstRetryDelay = options.firstRetryDelay
                configuration.unreachableRetryWindow = options.unreachableRetryWindow
                let service = DeliveryService(
                    store: db.store, configuration: configuration, clock: options.clock, logger: options.logger,
                    telemetry: options.observability.delivery)
                let world = DeliveryWorld(db: db, mock: mock, fixture: fixture, configuration: configuration)
                let workers = Task { try await service.run() }
                let application = Application(
                    router: buildRouter(store: db.store, clock: options.clock, observability: options.observability),
                    configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: options.logger)
                do {
                    try await application.test(options.setup) { client in
                        try await body(world, client)
                    }
                } catch {
                    workers.cancel()
                    _ = await workers.result
                    throw error
                }
                workers.cancel()
                _ = await workers.result
            }
        } catch {
            await mock.shutdown()
            throw error
        }
        await mock.shutdown()
    }

    /// An app "News" with an iOS platform whose token credentials are signed by `key` (the mock
    /// knows its public half under `keyID`).
    static func iOSFixture(_ store: Store, key: P256.Signing.PrivateKey) async throws -> Fixture {
        let tenant = try #require(try await store.tenants.create(name: "t"))
        let (app, apiKey) = try await store.applications.create(tenantID: tenant.id, name: "News", description: "")
        let credentials = try CredentialsInput(
            p8: key.pemRepresentation, keyID: keyID, teamID: "DEF123GHIJ", topic: "com.example.news"
        ).validate(for: .ios)
        let (platform, secret) = try await store.platforms.create(applicationID: app.id, name: "ios", type: .ios, credentials: credentials)
        return Fixture(app: app, apiKey: apiKey, platform: platform, platformSecret: secret)
    }

    /// Starts a mock APNs over TLS that knows a new signing key: returns it, the key, and a
    /// delivery configuration that sends to it and trusts its CA.
    static func startMock() async throws -> (MockAPNsServer, P256.Signing.PrivateKey, DeliveryConfiguration) {
        let tls = try MockTLS()
        let key = P256.Signing.PrivateKey()
        var behavior = MockAPNsServer.Behavior()
        behavior.signingKeys = [keyID: key.publicKey]
        let mock = MockAPNsServer(tls: tls, behavior: behavior)
        let port = try await mock.start()
        var configuration = DeliveryConfiguration()
        configuration.apnsEndpoint = "https://127.0.0.1:\(port)"
        configuration.extraTrustedCAPEM = tls.caCertificatePEM
        return (mock, key, configuration)
    }

    /// Registers a device with a fresh token on the world's platform.
    func register(tags: [String] = [], customUserID: String? = nil) async throws -> Device {
        try await db.store.devices.register(
            on: fixture.platform,
            try RegistrationInput(
                registrationToken: randomAPNsToken(), customUserID: customUserID.map { .set($0) } ?? .unchanged,
                tags: .replace(tags)
            ).validated(for: .ios, requireToken: true))
    }

    /// Sends a push through the API and returns its receipt id.
    func send(_ json: String, _ client: any TestClientProtocol) async throws -> String {
        let response = try await client.execute(uri: "/v1/push", method: .post, headers: appAuth(fixture), body: body(json))
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try #require(try response.json()["receipt_id"] as? String)
    }

    /// The push's status as the API reports it.
    func status(_ receipt: String, _ client: any TestClientProtocol) async throws -> [String: Any] {
        try await client.execute(uri: "/v1/push/\(receipt)", method: .get, headers: appAuth(fixture)).json()
    }

    /// Polls the receipt until the push is done; fails past the deadline.
    func finished(_ receipt: String, _ client: any TestClientProtocol, within deadline: Duration = .seconds(30)) async throws -> [String:
        Any]
    {
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            let json = try await status(receipt, client)
            if json["status"] as? String == "done" { return json }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure(message: "push \(receipt) did not finish in time: \(try await status(receipt, client))")
    }

    /// Polls `condition` until it holds; fails past the deadline.
    static func poll(
        _ what: String, within deadline: Duration = .seconds(30), _ condition: () async throws -> Bool
    ) async throws {
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure(message: "timed out waiting until \(what)")
    }
}
