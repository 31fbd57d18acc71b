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
import NIOCore
import Testing

/// Geofence edits through the API, coalesced into one silent push per device, delivered by the
/// workers to the mock APNs.
@Suite struct GeofenceUpdatePushTests {
    struct World {
        let db: TestDatabase
        let mock: MockAPNsServer
        let fixture: Fixture
        let subscribed: [Device]
        let other: Device
        /// The store's clock: the pending push is due only when the test moves it.
        let clock: TestClock
    }

    @Test(arguments: Backend.available)
    func aBurstOfEditsReachesEachAffectedDeviceOnce(_ backend: Backend) async throws {
        try await withWorld(backend) { world, client in
            let fixture = world.fixture
            let place = try await client.execute(
                uri: "/v1/locations", method: .post, headers: appAuth(fixture),
                body: ByteBuffer(string: #"{"name":"stadium","lat":"49.27","long":"-123.11","rad":200}"#))
            let placeID = try #require(try place.json()["id"] as? Int)
            let body = #"""
                {"tags":["news"],"locations":[\#(placeID)],"trigger_type":"enter","expiry_time":4102444800000,"platform":"ios",
                 "data":{"ios":{"alertBody":"Welcome"}}}
                """#
            var ids: [Int] = []
            for _ in 0..<3 {
                let created = try await client.execute(
                    uri: "/v1/geofence", method: .post, headers: appAuth(fixture), body: ByteBuffer(string: body))
                ids.append(try #require(try created.json()["id"] as? Int))
            }
            _ = try await client.execute(
                uri: "/v1/geofence/\(ids[0])", method: .put, headers: appAuth(fixture),
                body: ByteBuffer(string: #"{"tags":["news","local"]}"#))
            _ = try await client.execute(uri: "/v1/geofence/\(ids[1])", method: .delete, headers: appAuth(fixture))

            // One push for the burst, due once the edits have settled.
            let pushes = try await world.db.database.query("SELECT id FROM pushes").map { try $0.uuid("id") }
            #expect(pushes.count == 1)
            let receipt = try #require(pushes.first)
            #expect(try await world.db.store.pushes.find(id: receipt, applicationID: fixture.app.id)?.status == "queued")
            world.clock.advance(GeofenceUpdatePushTests.policy.delay)

            // The workers send it; wait (with a deadline) until they have finished.
            let deadline = ContinuousClock.now + .seconds(20)
            while try await world.db.store.pushes.find(id: receipt, applicationID: fixture.app.id)?.status != "done" {
                guard ContinuousClock.now < deadline else { throw TestFailure(message: "the geofence push never finished") }
                try await Task.sleep(for: .milliseconds(20))
            }

            let received = world.mock.received
            #expect(received.map(\.deviceToken).sorted() == world.subscribed.map(\.registrationToken).sorted())
            #expect(!received.map(\.deviceToken).contains(world.other.registrationToken))
            for notification in received {
                let payload = try #require(try JSONSerialization.jsonObject(with: Data(notification.payload)) as? [String: Any])
                #expect(payload["pivotal.push.geofence_update_available"] as? Bool == true)
                #expect((payload["aps"] as? [String: Any])?["content-available"] as? Int == 1)
                #expect(payload["receiptId"] as? String == receipt.uuidString.lowercased())
                #expect(notification.headers["apns-push-type"] == "background")
                #expect(notification.headers["apns-priority"] == "5")
            }
            let status = try await client.execute(
                uri: "/v1/push/\(receipt.uuidString.lowercased())", method: .get, headers: appAuth(fixture)
            ).json()
            #expect(status["delivered"] as? Int == 2)
        }
    }

    static let policy = GeofenceUpdatePolicy(delay: 1_000, maximumDelay: 5_000)

    /// An app with an iOS platform on the mock APNs, two devices subscribed to `news` or `local`
    /// and one to `sports`, the delivery workers, and the API; the store runs on a clock the test
    /// moves, so the test's edits form one burst however slowly the machine runs them.
    func withWorld(
        _ backend: Backend, _ body: @escaping @Sendable (World, any TestClientProtocol) async throws -> Void
    ) async throws {
        let tls = try MockTLS()
        let key = P256.Signing.PrivateKey()
        var behavior = MockAPNsServer.Behavior()
        behavior.signingKeys = ["ABC123DEFG": key.publicKey]
        let mock = MockAPNsServer(tls: tls, behavior: behavior)
        let port = try await mock.start()
        do {
            let clock = TestClock()
            try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
                let tenant = try #require(try await db.store.tenants.create(name: "t"))
                let (app, apiKey) = try await db.store.applications.create(tenantID: tenant.id, name: "Maps", description: "")
                let credentials = try CredentialsInput(
                    p8: key.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example.maps"
                ).validate(for: .ios)
                let (platform, secret) = try await db.store.platforms.create(
                    applicationID: app.id, name: "ios", type: .ios, credentials: credentials)
                func register(_ tags: [String]) async throws -> Device {
                    try await db.store.devices.register(
                        on: platform,
                        try RegistrationInput(registrationToken: randomAPNsToken(), tags: .replace(tags)).validated(
                            for: .ios, requireToken: true))
                }
                let world = World(
                    db: db, mock: mock, fixture: Fixture(app: app, apiKey: apiKey, platform: platform, platformSecret: secret),
                    subscribed: [try await register(["news"]), try await register(["local", "other"])],
                    other: try await register(["sports"]),
                    clock: clock)

                var configuration = DeliveryConfiguration()
                configuration.apnsEndpoint = "https://127.0.0.1:\(port)"
                configuration.extraTrustedCAPEM = tls.caCertificatePEM
                configuration.idlePoll = .milliseconds(10)
                let service = DeliveryService(store: db.store, configuration: configuration, logger: TestDatabase.logger)
                let workers = Task { try await service.run() }
                let router = buildRouter(store: db.store, geofenceUpdates: Self.policy)
                do {
                    try await Application(router: router, logger: TestDatabase.logger).test(.router) { client in
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
}
