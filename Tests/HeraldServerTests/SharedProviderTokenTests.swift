import Crypto
import Foundation
import HeraldCore
import HeraldMocks
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// Several `herald serve` instances on one database, each with its own store and delivery
/// workers (built by `buildApplication`, in this process so that their clock can be moved), send
/// to the mock APNs with one provider token between them: Apple refuses a key's token changed
/// more often than every 20 minutes (`TooManyProviderTokenUpdates`).
@Suite(.serialized) struct SharedProviderTokenTests {
    /// The servers, the mock, and the hand-moved clock they all read.
    struct World: Sendable {
        let db: TestDatabase
        let mock: MockAPNsServer
        let fixture: Fixture
        let clock: TestClock
        let clients: [any TestClientProtocol]

        /// Notifications each server's workers have sent so far (its `/metrics`).
        func sent() async throws -> [Int] {
            var counts: [Int] = []
            for client in clients {
                let response = try await client.execute(uri: "/metrics", method: .get)
                let lines = String(buffer: response.body).split(separator: "\n").filter { $0.hasPrefix("herald_notifications_sent_total") }
                counts.append(lines.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +).rounded().asInt)
            }
            return counts
        }

        /// Broadcasts through each server in turn until every server's workers have sent some of
        /// them (any process's workers may take a push), and every push is done.
        func pushThroughEveryServer() async throws {
            let before = try await sent()
            var receipts: [(String, any TestClientProtocol)] = []
            for round in 0..<30 {
                let client = clients[round % clients.count]
                let response = try await client.execute(
                    uri: "/v1/push", method: .post, headers: appAuth(fixture),
                    body: body(#"{"message":{"body":"Town Hall"},"target":{"platform":"ios"}}"#))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                receipts.append((try #require(try response.json()["receipt_id"] as? String), client))
                try await finish(receipts)
                let now = try await sent()
                if zip(before, now).allSatisfy({ $0 < $1 }) { return }
            }
            throw TestFailure(message: "30 pushes and some server sent none: \(before) → \(try await sent())")
        }

        /// Polls the pushes until they are done, moving the clock a little each time so that
        /// retries come due; fails past a deadline.
        func finish(_ receipts: [(String, any TestClientProtocol)]) async throws {
            try await DeliveryWorld.poll("the pushes are done", within: .seconds(120)) {
                clock.advance(by: .milliseconds(200))
                for (receipt, client) in receipts {
                    let status = try await client.execute(uri: "/v1/push/\(receipt)", method: .get, headers: appAuth(fixture)).json()
                    if status["status"] as? String != "done" { return false }
                    #expect(status["failed"] as? Int ?? 0 == 0, "\(status)")
                }
                return true
            }
        }

        /// The token the database holds for the platform (sealed; opened by the store).
        func storedToken() async throws -> String? {
            try await db.store.apnsTokens.renew(platformID: fixture.platform.id) { stored in
                guard let stored else { throw TestFailure(message: "no token stored") }
                return stored
            }.token
        }
    }

    /// Runs `body` with `servers` servers on one fresh database and the mock APNs.
    static func run(_ backend: Backend, servers: Int, _ body: @escaping @Sendable (World) async throws -> Void) async throws {
        let clock = TestClock(EpochClock.system.now.epochMilliseconds)
        let tls = try MockTLS()
        let key = P256.Signing.PrivateKey()
        var behavior = MockAPNsServer.Behavior()
        behavior.signingKeys = [DeliveryWorld.keyID: key.publicKey]
        behavior.clock = clock.epochClock
        let mock = MockAPNsServer(tls: tls, behavior: behavior)
        let port = try await mock.start()
        do {
            try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
                let tenant = try #require(try await db.store.tenants.create(name: "t"))
                let (app, apiKey) = try await db.store.applications.create(tenantID: tenant.id, name: "News", description: "")
                let credentials = try CredentialsInput(
                    p8: key.pemRepresentation, keyID: DeliveryWorld.keyID, teamID: "DEF123GHIJ", topic: "com.example.news"
                ).validate(for: .ios)
                let (platform, secret) = try await db.store.platforms.create(
                    applicationID: app.id, name: "ios", type: .ios, credentials: credentials)
                let fixture = Fixture(app: app, apiKey: apiKey, platform: platform, platformSecret: secret)
                for _ in 0..<4 {
                    _ = try await db.store.devices.register(
                        on: platform, try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true))
                }
                var configuration = ServerConfiguration(
                    host: "127.0.0.1", port: 0, dataDirectory: db.directory, databaseURL: db.databaseURL)
                configuration.delivery.apnsEndpoint = "https://127.0.0.1:\(port)"
                configuration.delivery.extraTrustedCAPEM = tls.caCertificatePEM
                configuration.delivery.workers = 2
                configuration.delivery.batchSize = 1
                configuration.delivery.idlePoll = .milliseconds(20)
                // Retries come due as `finish` moves the clock; a lease, judged by the same clock,
                // outlasts any batch of a loaded machine.
                configuration.delivery.firstRetryDelay = .milliseconds(100)
                configuration.delivery.lease = .seconds(600)
                configuration.observability.metricsPublic = true
                var applications: [ServerApplication] = []
                for _ in 0..<servers {
                    // Each server its own connections to the database, as a process would have (few:
                    // the whole suite shares one PostgreSQL).
                    let database: any SQLDatabase =
                        if let url = db.databaseURL {
                            try PostgresStoreDatabase(url: url, maximumConnections: 3, logger: TestDatabase.logger)
                        } else {
                            try await SQLiteStoreDatabase.open(
                                path: db.directory + "/herald.sqlite", readerCount: 2, logger: TestDatabase.logger)
                        }
                    let store = Store(
                        database: database, secretBox: try SecretBox(keyBytes: Array(repeating: 7, count: 32)), clock: clock.epochClock,
                        logger: TestDatabase.logger)
                    applications.append(
                        ServerApplication(
                            buildApplication(configuration, store: store, logger: TestDatabase.logger, clock: clock.epochClock)))
                }
                // A failure is kept until the servers have stopped gracefully: each server's
                // `DatabaseService` closes its database then, not when its task is cancelled.
                let failure = Mutex<(any Error)?>(nil)
                try await live(applications[...], clients: []) { clients in
                    do {
                        try await body(World(db: db, mock: mock, fixture: fixture, clock: clock, clients: clients))
                    } catch {
                        failure.withLock { $0 = error }
                    }
                }
                if let error = failure.withLock({ $0 }) { throw error }
            }
        } catch {
            await mock.shutdown()
            throw error
        }
        await mock.shutdown()
    }

    /// `buildApplication`'s opaque type, named so that several fit in an array.
    struct ServerApplication: Sendable {
        let run: @Sendable (@Sendable (any TestClientProtocol) async throws -> Void) async throws -> Void

        init(_ application: some ApplicationProtocol) {
            run = { body in try await application.test(.live, body) }
        }
    }

    /// Runs every application live, then `body` with their clients.
    static func live(
        _ applications: ArraySlice<ServerApplication>, clients: [any TestClientProtocol],
        _ body: @escaping @Sendable ([any TestClientProtocol]) async throws -> Void
    ) async throws {
        guard let first = applications.first else { return try await body(clients) }
        try await first.run { client in try await live(applications.dropFirst(), clients: clients + [client], body) }
    }

    /// The servers a backend runs: three on PostgreSQL, one on SQLite (one writer: one process).
    static func servers(_ backend: Backend) -> Int { backend == .postgres ? 3 : 1 }

    @Test(arguments: Backend.available)
    func everyServerPresentsOneTokenAndOneRenewalOfIt(_ backend: Backend) async throws {
        try await Self.run(backend, servers: Self.servers(backend)) { world in
            try await world.pushThroughEveryServer()
            let first = world.mock.providerTokens
            #expect(first.count == 1)
            #expect(try await world.storedToken() == first.first)
            // Past the renewal point (50 minutes), not yet Apple's hour.
            world.clock.advance(by: .seconds(51 * 60))
            try await world.pushThroughEveryServer()
            let tokens = world.mock.providerTokens
            #expect(tokens.count == 2, "\(tokens.count) tokens for \(Self.servers(backend)) servers")
            #expect(tokens.first == first.first)
            #expect(try await world.storedToken() == tokens.last)
        }
    }

    /// A token APNs stops accepting (403 `ExpiredProviderToken`, 25 minutes after it was signed)
    /// is replaced once for every server: the first server refused signs, the others take its
    /// token; the platform is not paused.
    @Test(arguments: Backend.available)
    func aRefusedTokenIsReplacedOnceForEveryServer(_ backend: Backend) async throws {
        try await Self.run(backend, servers: Self.servers(backend)) { world in
            try await world.pushThroughEveryServer()
            let refused = try #require(world.mock.providerTokens.first)
            world.clock.advance(by: .seconds(25 * 60))
            world.mock.update { $0.refusedProviderTokens = [refused: "ExpiredProviderToken"] }
            try await world.pushThroughEveryServer()
            let tokens = world.mock.providerTokens
            #expect(tokens.count == 2, "\(tokens.count) tokens for \(Self.servers(backend)) servers")
            #expect(try await world.storedToken() == tokens.last)
            #expect(try await world.db.store.platforms.find(id: world.fixture.platform.id)?.credentialsStatus == .ok)
        }
    }
}

extension Double {
    fileprivate var asInt: Int { Int(self) }
}
