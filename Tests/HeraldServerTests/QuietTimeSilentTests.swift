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

/// `"quiet_time": "silent"` and `"ignore"` end to end through all four providers' mocks: what
/// each provider received for a device in its quiet time and for one that is not, with the
/// device's own quiet time and the app's default.
@Suite struct QuietTimeSilentTests {
    /// The four mocks over one TLS authority.
    struct Mocks: Sendable {
        let tls: MockTLS
        let apnsKey = P256.Signing.PrivateKey()
        let apns: MockAPNsServer
        let fcm: MockFCMServer
        let webPush: MockWebPushServer
        let wns: MockWNSServer

        init() throws {
            tls = try MockTLS()
            var apnsBehavior = MockAPNsServer.Behavior()
            apnsBehavior.signingKeys = ["ABC123DEFG": apnsKey.publicKey]
            apns = MockAPNsServer(tls: tls, behavior: apnsBehavior)
            fcm = MockFCMServer(tls: tls)
            webPush = MockWebPushServer(tls: tls)
            var wnsBehavior = MockWNSServer.Behavior()
            wnsBehavior.clients = ["ms-app://s-1-15-2-1234": "wns-secret"]
            wns = MockWNSServer(tls: tls, behavior: wnsBehavior)
        }

        func shutdown() async {
            await apns.shutdown()
            await fcm.shutdown()
            await webPush.shutdown()
            await wns.shutdown()
        }
    }

    /// A quiet time of two hours around now (UTC), and one that starts two hours from now.
    static func windows() -> (now: QuietTime, later: QuietTime) {
        let minute = Int(EpochClock.system.now.epochMilliseconds / 60_000 % 1440)
        return (
            QuietTime(startMinute: (minute + 1380) % 1440, endMinute: (minute + 60) % 1440)!,
            QuietTime(startMinute: (minute + 120) % 1440, endMinute: (minute + 180) % 1440)!
        )
    }

    @Test(arguments: Backend.available)
    func quietDevicesGetTheSilentRenderingOfEachProviderAndIgnoreChangesNothing(_ backend: Backend) async throws {
        let mocks = try Mocks()
        do {
            try await deliver(backend, mocks)
        } catch {
            await mocks.shutdown()
            throw error
        }
        await mocks.shutdown()
    }

    private func deliver(_ backend: Backend, _ mocks: Mocks) async throws {
        let apnsPort = try await mocks.apns.start()
        let fcmPort = try await mocks.fcm.start()
        _ = try await mocks.webPush.start()
        _ = try await mocks.wns.start()
        try await withTestDatabase(backend) { db async throws in
            let store = db.store
            let tenant = try #require(try await store.tenants.create(name: "t"))
            let (app, apiKey) = try await store.applications.create(tenantID: tenant.id, name: "Quiet", description: "")
            let (_, adminToken) = try await store.adminTokens.create(tenantID: nil, name: "root")
            let (ios, _) = try await store.platforms.create(
                applicationID: app.id, name: "ios", type: .ios,
                credentials: try CredentialsInput(
                    p8: mocks.apnsKey.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example.quiet"
                ).validate(for: .ios))
            let (serviceAccount, account) = try MockFCMServer.makeServiceAccount(tokenURI: "https://127.0.0.1:\(fcmPort)/token")
            mocks.fcm.update { $0.accounts[account.clientEmail] = account }
            let (android, _) = try await store.platforms.create(
                applicationID: app.id, name: "android", type: .android,
                credentials: try CredentialsInput(serviceAccount: JSONText(serviceAccount)).validate(for: .android))
            let (web, _) = try await store.platforms.create(
                applicationID: app.id, name: "web", type: .web,
                credentials: try CredentialsInput(subject: "mailto:ops@example.com").validate(for: .web))
            let (windows, _) = try await store.platforms.create(
                applicationID: app.id, name: "windows", type: .windows,
                credentials: try CredentialsInput(clientID: "ms-app://s-1-15-2-1234", clientSecret: "wns-secret").validate(for: .windows))
            let (quietNow, quietLater) = Self.windows()

            /// Registers `token`, in UTC with `quiet` as its own quiet time (nil: none of its own).
            func register(_ platform: Platform, _ token: String, _ quiet: QuietTime?) async throws {
                let device = try await store.devices.register(
                    on: platform, try RegistrationInput(registrationToken: token).validated(for: platform.type, requireToken: true))
                try await store.devices.setTimeZone(.set("UTC"), deviceID: device.id)
                if let quiet { try await store.devices.setQuietTime(.set(quiet), deviceID: device.id) }
            }
            // Per platform a device in its quiet time and one without a quiet time of its own;
            // on iOS also one whose own quiet time is later (it wins over the app's default).
            let iosQuiet = randomAPNsToken()
            let iosPlain = randomAPNsToken()
            let iosLater = randomAPNsToken()
            try await register(ios, iosQuiet, quietNow)
            try await register(ios, iosPlain, nil)
            try await register(ios, iosLater, quietLater)
            let fcmQuiet = "fcm-quiet-\(UUID().uuidString)"
            let fcmPlain = "fcm-plain-\(UUID().uuidString)"
            try await register(android, fcmQuiet, quietNow)
            try await register(android, fcmPlain, nil)
            let vapidKey = try #require(web.credentialsSummary?.fields["public_key"])
            let webQuiet = mocks.webPush.subscribe(applicationServerKey: vapidKey)
            let webPlain = mocks.webPush.subscribe(applicationServerKey: vapidKey)
            try await register(web, webQuiet.subscriptionJSON(origin: mocks.webPush.origin), quietNow)
            try await register(web, webPlain.subscriptionJSON(origin: mocks.webPush.origin), nil)
            let wnsQuiet = "quiet-\(UUID().uuidString)"
            let wnsPlain = "plain-\(UUID().uuidString)"
            try await register(windows, mocks.wns.channelURI(token: wnsQuiet), quietNow)
            try await register(windows, mocks.wns.channelURI(token: wnsPlain), nil)

            var configuration = DeliveryConfiguration()
            configuration.apnsEndpoint = "https://127.0.0.1:\(apnsPort)"
            configuration.fcmEndpoint = "https://127.0.0.1:\(fcmPort)"
            configuration.wnsTokenEndpoint = mocks.wns.tokenEndpoint
            configuration.wnsAllowedTestHost = "127.0.0.1"
            configuration.extraTrustedCAPEM = mocks.tls.caCertificatePEM
            configuration.idlePoll = .milliseconds(10)
            configuration.batchSize = 4
            let workers = Task {
                try await DeliveryService(store: store, configuration: configuration, logger: TestDatabase.logger).run()
            }
            defer { workers.cancel() }
            let application = Application(router: buildRouter(store: store), logger: TestDatabase.logger)
            try await application.test(.router) { client in
                let fixture = Fixture(app: app, apiKey: apiKey, platform: ios, platformSecret: "")
                /// Sends `quietTime` (a JSON member, or empty) and waits until all 9 devices have it.
                func send(_ quietTime: String) async throws -> String {
                    let response = try await client.execute(
                        uri: "/v1/push", method: .post, headers: appAuth(fixture),
                        body: body(
                            #"{"message":{"body":"Hi","custom":{"ios":{"sound":"default"},"android":{"notification":true},"web":{"urgency":"high"}}},"target":{"platform":"all"}\#(quietTime)}"#
                        ))
                    #expect(response.status == .ok, "\(String(buffer: response.body))")
                    let receipt = try #require(try response.json()["receipt_id"] as? String)
                    try await DeliveryWorld.poll("the push is done") {
                        try await client.execute(uri: "/v1/push/\(receipt)", method: .get, headers: appAuth(fixture)).json()["status"]
                            as? String == "done"
                    }
                    let status = try await client.execute(uri: "/v1/push/\(receipt)", method: .get, headers: appAuth(fixture)).json()
                    #expect(status["delivered"] as? Int == 9, "\(status)")
                    return receipt
                }
                /// Token → whether what it received for `receipt` was the quiet rendering, per provider.
                func quietness(_ receipt: String) throws -> [String: Bool] {
                    var quiet: [String: Bool] = [:]
                    for received in mocks.apns.received {
                        let json = try #require(try JSONSerialization.jsonObject(with: Data(received.payload)) as? [String: Any])
                        guard json["receiptId"] as? String == receipt else { continue }
                        let aps = try #require(json["aps"] as? [String: Any])
                        #expect(aps["alert"] as? String == "Hi")
                        let passive = aps["interruption-level"] as? String == "passive"
                        // Passive exactly when the sound is gone.
                        #expect(passive == (aps["sound"] == nil), "\(aps)")
                        quiet[received.deviceToken] = passive
                    }
                    for received in mocks.fcm.received {
                        let data = received.message.objectValue?["data"]?.objectValue
                        guard data?["receiptId"] == .string(receipt) else { continue }
                        #expect(data?["message"] == .string("Hi"))
                        quiet[received.target] = received.message.objectValue?["notification"] == nil
                    }
                    for received in mocks.webPush.received {
                        let json = try #require(try JSONSerialization.jsonObject(with: Data(received.plaintext)) as? [String: Any])
                        guard json["receiptId"] as? String == receipt else { continue }
                        #expect(["very-low", "high"].contains(received.headers["urgency"]), "\(received.headers)")
                        quiet[received.subscriptionID] = received.headers["urgency"] == "very-low"
                    }
                    for received in mocks.wns.received where received.text.contains(receipt) {
                        #expect(received.type == "wns/toast")
                        quiet[received.channel] = received.headers["x-wns-suppresspopup"] == "true"
                    }
                    return quiet
                }

                // Silent: the devices in their own quiet time get the quiet rendering.
                let silent = try await send(#","quiet_time":"silent""#)
                #expect(
                    try quietness(silent) == [
                        iosQuiet: true, iosPlain: false, iosLater: false, fcmQuiet: true, fcmPlain: false,
                        webQuiet.id: true, webPlain.id: false, wnsQuiet: true, wnsPlain: false,
                    ])
                // Ignore (the default, and said outright): everyone gets the usual rendering.
                for quietTime in ["", #","quiet_time":"ignore""#] {
                    #expect(try quietness(try await send(quietTime)).values.allSatisfy { !$0 })
                }
                // The app's default quiet time covers the devices without one of their own.
                let settings = try await client.execute(
                    uri: "/admin/v1/apps/\(app.id.lowercasedString)/delivery", method: .put, headers: bearer(adminToken),
                    body: body(#"{"quiet_time":{"start":"\#(quietNow.startText)","end":"\#(quietNow.endText)"}}"#))
                #expect(settings.status == .ok, "\(String(buffer: settings.body))")
                #expect(try settings.json()["quiet_time"] as? [String: String] == ["start": quietNow.startText, "end": quietNow.endText])
                let byDefault = try await send(#","quiet_time":"silent""#)
                #expect(
                    try quietness(byDefault) == [
                        iosQuiet: true, iosPlain: true, iosLater: false, fcmQuiet: true, fcmPlain: true,
                        webQuiet.id: true, webPlain.id: true, wnsQuiet: true, wnsPlain: true,
                    ])
            }
            workers.cancel()
            _ = await workers.result
        }
    }
}
