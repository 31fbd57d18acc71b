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

/// One push to an app with an iOS, an Android, a web and a Windows platform: each device gets
/// exactly one correct copy through its own provider's mock, over real TLS.
@Suite struct MixedDeliveryTests {
    @Test(arguments: Backend.available)
    func oneBroadcastReachesEveryKindOfDeviceOnceThroughItsProvider(_ backend: Backend) async throws {
        let tls = try MockTLS()
        let apnsKey = P256.Signing.PrivateKey()
        var apnsBehavior = MockAPNsServer.Behavior()
        apnsBehavior.signingKeys = ["ABC123DEFG": apnsKey.publicKey]
        let apns = MockAPNsServer(tls: tls, behavior: apnsBehavior)
        let fcm = MockFCMServer(tls: tls)
        let webPush = MockWebPushServer(tls: tls)
        var wnsBehavior = MockWNSServer.Behavior()
        wnsBehavior.clients = ["ms-app://s-1-15-2-1234": "wns-secret"]
        let wns = MockWNSServer(tls: tls, behavior: wnsBehavior)
        let apnsPort = try await apns.start()
        let fcmPort = try await fcm.start()
        _ = try await webPush.start()
        _ = try await wns.start()
        @Sendable func shutdownMocks() async {
            await apns.shutdown()
            await fcm.shutdown()
            await webPush.shutdown()
            await wns.shutdown()
        }
        do {
            try await deliver(backend, tls, apnsKey, apns, apnsPort, fcm, fcmPort, webPush, wns)
        } catch {
            await shutdownMocks()
            throw error
        }
        await shutdownMocks()
    }

    private func deliver(
        _ backend: Backend, _ tls: MockTLS, _ apnsKey: P256.Signing.PrivateKey, _ apns: MockAPNsServer, _ apnsPort: Int,
        _ fcm: MockFCMServer, _ fcmPort: Int, _ webPush: MockWebPushServer, _ wns: MockWNSServer
    ) async throws {
        try await withTestDatabase(backend) { db async throws in
            let store = db.store
            let tenant = try #require(try await store.tenants.create(name: "t"))
            let (app, apiKey) = try await store.applications.create(tenantID: tenant.id, name: "Everywhere", description: "")
            let (ios, _) = try await store.platforms.create(
                applicationID: app.id, name: "ios", type: .ios,
                credentials: try CredentialsInput(
                    p8: apnsKey.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example.all"
                ).validate(for: .ios))
            let (serviceAccount, account) = try MockFCMServer.makeServiceAccount(tokenURI: "https://127.0.0.1:\(fcmPort)/token")
            fcm.update { $0.accounts[account.clientEmail] = account }
            let (android, _) = try await store.platforms.create(
                applicationID: app.id, name: "android", type: .android,
                credentials: try CredentialsInput(serviceAccount: JSONText(serviceAccount)).validate(for: .android))
            // An Android platform that asks for the notification block (fcm_notification).
            let (notifying, _) = try await store.platforms.create(
                applicationID: app.id, name: "android shown", type: .android,
                credentials: try CredentialsInput(serviceAccount: JSONText(serviceAccount)).validate(for: .android), fcmNotification: true)
            let (web, _) = try await store.platforms.create(
                applicationID: app.id, name: "web", type: .web,
                credentials: try CredentialsInput(subject: "mailto:ops@example.com").validate(for: .web))
            let (windows, _) = try await store.platforms.create(
                applicationID: app.id, name: "windows", type: .windows,
                credentials: try CredentialsInput(clientID: "ms-app://s-1-15-2-1234", clientSecret: "wns-secret").validate(for: .windows))

            func register(_ platform: Platform, _ token: String) async throws -> Device {
                try await store.devices.register(
                    on: platform,
                    try RegistrationInput(registrationToken: token).validated(for: platform.type, requireToken: true))
            }
            let shownToken = try await register(notifying, "fcm-shown-\(UUID().uuidString)").registrationToken
            var iosTokens: Set<String> = []
            var fcmTokens: Set<String> = []
            var subscribers: [MockWebPushSubscriber] = []
            var channels: Set<String> = []
            let vapidKey = try #require(web.credentialsSummary?.fields["public_key"])
            for index in 0..<3 {
                iosTokens.insert(try await register(ios, randomAPNsToken()).registrationToken)
                fcmTokens.insert(try await register(android, "fcm-token-\(index)-\(UUID().uuidString)").registrationToken)
                let subscriber = webPush.subscribe(applicationServerKey: vapidKey)
                subscribers.append(subscriber)
                _ = try await register(web, subscriber.subscriptionJSON(origin: webPush.origin))
                let channel = "channel-\(index)-\(UUID().uuidString)"
                _ = try await register(windows, wns.channelURI(token: channel))
                channels.insert(channel)
            }

            let (expectedIOS, expectedFCM, expectedWeb, expectedChannels) = (iosTokens, fcmTokens, Set(subscribers.map(\.id)), channels)
            var configuration = DeliveryConfiguration()
            configuration.apnsEndpoint = "https://127.0.0.1:\(apnsPort)"
            configuration.fcmEndpoint = "https://127.0.0.1:\(fcmPort)"
            configuration.wnsTokenEndpoint = wns.tokenEndpoint
            configuration.wnsAllowedTestHost = "127.0.0.1"
            configuration.extraTrustedCAPEM = tls.caCertificatePEM
            configuration.idlePoll = .milliseconds(10)
            configuration.batchSize = 4
            let workers = Task {
                try await DeliveryService(store: store, configuration: configuration, logger: TestDatabase.logger).run()
            }
            defer { workers.cancel() }
            let application = Application(router: buildRouter(store: store), logger: TestDatabase.logger)
            try await application.test(.router) { client in
                let fixture = Fixture(app: app, apiKey: apiKey, platform: ios, platformSecret: "")
                let response = try await client.execute(
                    uri: "/v1/push", method: .post, headers: appAuth(fixture),
                    body: body(#"{"message":{"body":"Hello & welcome"},"target":{"platform":"all"}}"#))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                let receipt = try #require(try response.json()["receipt_id"] as? String)

                let deadline = ContinuousClock.now + .seconds(30)
                var status: [String: Any] = [:]
                while ContinuousClock.now < deadline {
                    status = try await client.execute(uri: "/v1/push/\(receipt)", method: .get, headers: appAuth(fixture)).json()
                    if status["status"] as? String == "done" { break }
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(status["status"] as? String == "done", "\(status)")
                #expect(status["targeted"] as? Int == 13)
                #expect(status["delivered"] as? Int == 13, "\(status)")

                // iOS: one alert each, with the receipt.
                #expect(apns.received.count == 3)
                #expect(Set(apns.received.map(\.deviceToken)) == expectedIOS)
                for notification in apns.received {
                    let payload = try #require(try JSONSerialization.jsonObject(with: Data(notification.payload)) as? [String: Any])
                    #expect((payload["aps"] as? [String: Any])?["alert"] as? String == "Hello & welcome")
                    #expect(payload["receiptId"] as? String == receipt)
                }
                // Android: the body in data.message, as the PCF SDK reads it, in a data message
                // (no notification block) unless the platform asks for one.
                #expect(fcm.received.count == 4)
                #expect(Set(fcm.received.map(\.target)) == expectedFCM.union([shownToken]))
                for message in fcm.received {
                    #expect(message.message.objectValue?["data"]?.objectValue?["message"] == .string("Hello & welcome"))
                    #expect(message.message.objectValue?["data"]?.objectValue?["receiptId"] == .string(receipt))
                    let notification = message.message.objectValue?["notification"]
                    if message.target == shownToken {
                        #expect(notification == .object(["body": .string("Hello & welcome")]))
                    } else {
                        #expect(notification == nil)
                    }
                }
                // Web: decrypted by the mock with each subscription's key.
                #expect(webPush.received.count == 3)
                #expect(Set(webPush.received.map(\.subscriptionID)) == expectedWeb)
                for message in webPush.received {
                    let json = try #require(try JSONSerialization.jsonObject(with: Data(message.plaintext)) as? [String: Any])
                    #expect(json["body"] as? String == "Hello & welcome")
                    #expect(json["receiptId"] as? String == receipt)
                }
                // Windows: a toast, the body XML-escaped.
                #expect(wns.received.count == 3)
                #expect(Set(wns.received.map(\.channel)) == expectedChannels)
                for notification in wns.received {
                    #expect(notification.type == "wns/toast")
                    #expect(notification.text.contains("Hello &amp; welcome"))
                }
            }
            workers.cancel()
            _ = await workers.result
        }
    }
}
