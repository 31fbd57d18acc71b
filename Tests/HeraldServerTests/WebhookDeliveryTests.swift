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

/// Webhook events end to end: queued with the change that caused them, POSTed signed by the
/// webhook workers to a receiver on 127.0.0.1, retried with backoff, once per event id across
/// processes, and never to a private address unless the operator allows it.
@Suite struct WebhookDeliveryTests {
    /// Workers that look at an idle queue often, allowed to reach the local receiver.
    static func configuration(allowPrivate: Bool = true) -> WebhookConfiguration {
        var configuration = WebhookConfiguration()
        configuration.workers = 2
        configuration.idlePoll = .milliseconds(10)
        configuration.addressPolicy = WebhookAddressPolicy(allowsPrivate: allowPrivate)
        return configuration
    }

    /// For the tests on a clock they move by hand: an attempt that timed out on a loaded machine
    /// would be due again only when the test moves the clock, so the timeouts are generous.
    static func patientConfiguration() -> WebhookConfiguration {
        var configuration = configuration()
        configuration.connectTimeout = .seconds(30)
        configuration.requestTimeout = .seconds(45)
        return configuration
    }

    /// Runs `services` while `body` runs, then cancels them.
    static func running(_ services: [WebhookService], _ body: () async throws -> Void) async throws {
        let task = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for service in services { group.addTask { try await service.run() } }
                try await group.waitForAll()
            }
        }
        do {
            try await body()
        } catch {
            task.cancel()
            _ = await task.result
            throw error
        }
        task.cancel()
        _ = await task.result
    }

    /// The endpoint's single delivery record, once there is one.
    static func record(_ store: Store, _ endpoint: WebhookEndpoint) async throws -> WebhookDeliveryRecord? {
        try await store.webhooks.deliveries(endpointID: endpoint.id, limit: 10).first
    }

    // MARK: Events of delivery

    /// A push with a live and a dead device: the receiver gets one `push.done` with the final
    /// counters and one `device.deactivated` for the dead token, each signed with the endpoint's
    /// secret and carrying its event id in the body and a header.
    @Test(arguments: Backend.available)
    func aFinishedPushAndADeactivatedDeviceArePostedSigned(_ backend: Backend) async throws {
        try await WebhookReceiver.with { receiver, port in
            try await DeliveryWorld.run(backend) { world, client in
                let store = world.db.store
                let (endpoint, secret) = try await store.webhooks.create(
                    applicationID: world.fixture.app.id, url: "http://127.0.0.1:\(port)/hook", events: [.pushDone, .deviceDeactivated])
                #expect(secret.hasPrefix("whsec_") && secret.count > 40)
                let service = WebhookService(store: store, configuration: Self.configuration(), logger: TestDatabase.logger)
                let dead = try await world.register()
                _ = try await world.register()
                let diedAt = EpochClock.system.now.epochMilliseconds + 60_000
                world.mock.update { $0.unregistered[dead.registrationToken] = diedAt }
                var receipt = ""
                try await Self.running([service]) {
                    receipt = try await world.send(#"{"message":{"body":"Hello"},"target":{"platforms":["ios"]}}"#, client)
                    _ = try await world.finished(receipt, client)
                    try await DeliveryWorld.poll("both deliveries are recorded as delivered") {
                        let records = try await store.webhooks.deliveries(endpointID: endpoint.id, limit: 10)
                        return records.count == 2 && records.allSatisfy { $0.state == "delivered" && $0.lastStatus == 200 }
                    }
                }
                let received = receiver.received
                #expect(received.count == 2)
                #expect(received.filter { $0.eventType == "push.done" }.count == 1)

                let done = try #require(received.first { $0.eventType == "push.done" })
                let now = EpochClock.system.now.epochMilliseconds / 1000
                #expect(WebhookSignature.verify(header: done.signature ?? "", secret: secret, body: done.body, now: now))
                #expect(!WebhookSignature.verify(header: done.signature ?? "", secret: secret + "x", body: done.body, now: now))
                #expect(!WebhookSignature.verify(header: done.signature ?? "", secret: secret, body: done.body + [0x20], now: now))
                let doneJSON = try done.json()
                #expect(doneJSON["type"] as? String == "push.done")
                #expect(doneJSON["id"] as? String == done.eventID)
                #expect(doneJSON["app_id"] as? String == world.fixture.app.id.lowercasedString)
                let counters = try #require(doneJSON["data"] as? [String: Any])
                #expect(counters["push_id"] as? String == receipt)
                #expect(counters["targeted"] as? Int == 2)
                #expect(counters["delivered"] as? Int == 1)
                #expect(counters["invalid_tokens"] as? Int == 1)
                #expect(counters["failures"] as? [String: Any] != nil)

                let deactivated = try #require(received.first { $0.eventType == "device.deactivated" })
                #expect(WebhookSignature.verify(header: deactivated.signature ?? "", secret: secret, body: deactivated.body, now: now))
                let device = try #require(try deactivated.json()["data"] as? [String: Any])
                #expect(device["device_uuid"] as? String == dead.uuid.lowercasedString)
                #expect(device["token"] as? String == dead.registrationToken)
                #expect(device["reason"] as? String == "Unregistered")
                #expect(device["provider_timestamp"] as? Int64 == diedAt)
                #expect(deactivated.eventID != done.eventID)
            }
        }
    }

    /// An app without endpoints queues nothing; an endpoint gets only the events it asked for.
    @Test(arguments: Backend.available)
    func anEndpointGetsOnlyTheEventsItAskedFor(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db in
            let fixture = try await Fixture.make(db.store)
            try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .failing)
            let (endpoint, _) = try await db.store.webhooks.create(
                applicationID: fixture.app.id, url: "https://hooks.example.com/a", events: [.pushDone])
            try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .ok)
            try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .failing)
            #expect(try await db.store.webhooks.deliveries(endpointID: endpoint.id, limit: 10).isEmpty)
            let rows = try await db.database.query("SELECT COUNT(*) AS n FROM webhook_deliveries")
            #expect(try rows.first?.int("n") == 0)
        }
    }

    /// A platform that starts failing queues `platform.failing` once (failing again is no change);
    /// new credentials for it queue `platform.recovered`; each event has its own id.
    @Test(arguments: Backend.available)
    func platformEventsAreQueuedOncePerChangeOfState(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db in
            let fixture = try await Fixture.make(db.store)
            let (endpoint, _) = try await db.store.webhooks.create(
                applicationID: fixture.app.id, url: "https://hooks.example.com/a", events: [.platformFailing, .platformRecovered])
            try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .failing)
            try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .failing)
            _ = try await db.store.platforms.update(id: fixture.platform.id, name: nil, credentials: try Fixture.credentials(for: .ios))
            // New credentials for a platform that was not failing recover nothing.
            _ = try await db.store.platforms.update(id: fixture.platform.id, name: nil, credentials: try Fixture.credentials(for: .ios))
            let records = try await db.store.webhooks.deliveries(endpointID: endpoint.id, limit: 10)
            #expect(records.map(\.eventType) == ["platform.recovered", "platform.failing"])
            #expect(Set(records.map(\.eventID)).count == 2)
            #expect(records.allSatisfy { $0.state == "pending" && $0.attempts == 0 })
        }
    }

    // MARK: Retries

    /// A receiver answering 500 is tried again after about 10 s, then 20 s, then 40 s (each wait
    /// between half and all of that, on the injected clock), with the same body and event id,
    /// until it answers 2xx; the admin record shows the attempts and the last answer.
    @Test(arguments: Backend.available)
    func aFailingReceiverIsRetriedWithBackoff(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db in
            let fixture = try await Fixture.make(db.store)
            try await WebhookReceiver.with { receiver, port in
                receiver.answer(.internalServerError)
                let (endpoint, secret) = try await db.store.webhooks.create(
                    applicationID: fixture.app.id, url: "http://127.0.0.1:\(port)/hook", events: [.platformFailing, .platformRecovered])
                var configuration = Self.patientConfiguration()
                configuration.firstRetryDelay = .seconds(10)
                let service = WebhookService(
                    store: db.store, configuration: configuration, clock: clock.epochClock, logger: TestDatabase.logger)
                try await Self.running([service]) {
                    try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .failing)
                    var expected: Int64 = 10_000
                    for attempt in 1...3 {
                        try await DeliveryWorld.poll("attempt \(attempt) is recorded") {
                            try await Self.record(db.store, endpoint)?.attempts == attempt
                        }
                        let record = try #require(try await Self.record(db.store, endpoint))
                        #expect(receiver.received.count == attempt)
                        #expect(record.state == "pending")
                        #expect(record.lastStatus == 500)
                        #expect(record.lastExcerpt == "answer 500")
                        let wait = try #require(record.nextAttemptAt) - clock.now
                        #expect(wait >= expected / 2 && wait <= expected, "attempt \(attempt) waits \(wait) ms")
                        // The count above shows that nothing came before the clock reached the
                        // due time; after the third failure the receiver recovers.
                        if attempt == 3 { receiver.answer(.noContent) }
                        clock.advance(wait)
                        expected *= 2
                    }
                    try await DeliveryWorld.poll("the fourth attempt delivers it") {
                        try await Self.record(db.store, endpoint)?.state == "delivered"
                    }
                }
                let record = try #require(try await Self.record(db.store, endpoint))
                #expect(record.attempts == 4)
                #expect(record.lastStatus == 204)
                #expect(record.nextAttemptAt == nil)
                let received = receiver.received
                #expect(received.count == 4)
                #expect(Set(received.map(\.body)).count == 1)
                #expect(Set(received.compactMap(\.eventID)) == [record.eventID.lowercasedString])
                for delivery in received {
                    #expect(
                        WebhookSignature.verify(
                            header: delivery.signature ?? "", secret: secret, body: delivery.body, now: clock.epochSeconds))
                }
                let data = try #require(try received[0].json()["data"] as? [String: Any])
                #expect(data["platform_id"] as? String == fixture.platform.id.lowercasedString)
            }
        }
    }

    /// A delivery whose next try would fall after its retry window is recorded as failed.
    @Test(arguments: Backend.available)
    func aDeliveryIsGivenUpAfterItsRetryWindow(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db in
            let fixture = try await Fixture.make(db.store)
            try await WebhookReceiver.with { receiver, port in
                receiver.answer(.serviceUnavailable)
                let (endpoint, _) = try await db.store.webhooks.create(
                    applicationID: fixture.app.id, url: "http://127.0.0.1:\(port)/hook", events: [.platformFailing])
                var configuration = Self.patientConfiguration()
                configuration.firstRetryDelay = .seconds(10)
                configuration.retryWindow = .seconds(4)
                let service = WebhookService(
                    store: db.store, configuration: configuration, clock: clock.epochClock, logger: TestDatabase.logger)
                try await Self.running([service]) {
                    try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .failing)
                    try await DeliveryWorld.poll("the delivery is given up") {
                        try await Self.record(db.store, endpoint)?.state == "failed"
                    }
                }
                let record = try #require(try await Self.record(db.store, endpoint))
                #expect(record.attempts == 1)
                #expect(record.lastStatus == 503)
                #expect(record.nextAttemptAt == nil)
            }
        }
    }

    // MARK: Several processes

    /// Two processes (two stores, two sets of workers) on one PostgreSQL database: each of 20
    /// events reaches the receiver once.
    @Test func twoProcessesDeliverEachEventOnce() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { db in
            let url = try #require(db.databaseURL)
            let otherDatabase = try PostgresStoreDatabase(url: url, maximumConnections: 4, logger: TestDatabase.logger)
            let other = Store(
                database: otherDatabase, secretBox: try SecretBox(keyBytes: Array(repeating: 7, count: 32)),
                logger: TestDatabase.logger)
            do {
                let fixture = try await Fixture.make(db.store)
                try await WebhookReceiver.with { receiver, port in
                    let (endpoint, _) = try await db.store.webhooks.create(
                        applicationID: fixture.app.id, url: "http://127.0.0.1:\(port)/hook", events: [.platformFailing])
                    var platforms = [fixture.platform.id]
                    for index in 1..<20 {
                        let (platform, _) = try await db.store.platforms.create(
                            applicationID: fixture.app.id, name: "p\(index)", type: .ios, credentials: try Fixture.credentials(for: .ios))
                        platforms.append(platform.id)
                    }
                    var configuration = Self.configuration()
                    configuration.workers = 4
                    let services = [
                        WebhookService(store: db.store, configuration: configuration, logger: TestDatabase.logger),
                        WebhookService(store: other, configuration: configuration, logger: TestDatabase.logger),
                    ]
                    try await Self.running(services) {
                        for (index, platform) in platforms.enumerated() {
                            try await (index % 2 == 0 ? db.store : other).platforms.setCredentialsStatus(id: platform, .failing)
                        }
                        try await DeliveryWorld.poll("every event is delivered") {
                            let records = try await db.store.webhooks.deliveries(endpointID: endpoint.id, limit: 100)
                            return records.count == 20 && records.allSatisfy { $0.state == "delivered" }
                        }
                    }
                    let ids = receiver.received.compactMap(\.eventID)
                    #expect(ids.count == 20)
                    #expect(Set(ids).count == 20)
                    let records = try await db.store.webhooks.deliveries(endpointID: endpoint.id, limit: 100)
                    #expect(records.allSatisfy { $0.attempts == 1 })
                }
            } catch {
                await otherDatabase.shutdown()
                throw error
            }
            await otherDatabase.shutdown()
        }
    }

    // MARK: Private addresses

    /// Without `--webhook-allow-private`, an https URL whose host name resolves to 127.0.0.1 is
    /// refused when the worker connects (the name passed registration); nothing reaches the
    /// receiver listening there, and the record says why.
    @Test(arguments: Backend.available)
    func aHostNameResolvingToLoopbackIsRefusedAtConnectTime(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db in
            let fixture = try await Fixture.make(db.store)
            try await WebhookReceiver.with { receiver, port in
                let url = "https://localhost:\(port)/hook"
                // The name passes the registration check: only resolving it shows where it leads.
                _ = try WebhookTarget(url: url, policy: WebhookAddressPolicy())
                let (endpoint, _) = try await db.store.webhooks.create(applicationID: fixture.app.id, url: url, events: [.platformFailing])
                let service = WebhookService(
                    store: db.store, configuration: Self.configuration(allowPrivate: false), logger: TestDatabase.logger)
                try await Self.running([service]) {
                    try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .failing)
                    try await DeliveryWorld.poll("the attempt is recorded") { try await Self.record(db.store, endpoint)?.attempts == 1 }
                }
                let record = try #require(try await Self.record(db.store, endpoint))
                #expect(record.lastStatus == nil)
                #expect(record.lastError?.contains("127.0.0.1") == true, "\(record.lastError ?? "")")
                #expect(record.state == "pending")
                #expect(receiver.received.isEmpty)
            }
        }
    }

    /// Over https, the worker connects to the address it checked yet verifies the certificate
    /// against the URL's name: a receiver whose certificate names `localhost` gets the event; one
    /// whose certificate names another host gets nothing (the TLS handshake fails, and the
    /// record says so).
    @Test(arguments: Backend.available)
    func httpsDeliveriesVerifyTheNameTheyResolved(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db in
            let fixture = try await Fixture.make(db.store)
            let named = try MockTLS(hostnames: ["localhost"], addresses: [])
            // Neither names the address (swift-nio-ssl also accepts a certificate for the very
            // address connected to): only the name can make a certificate valid here.
            let other = try MockTLS(hostnames: ["elsewhere.example"], addresses: [])
            let good = MockWebhookReceiver(tls: named)
            let bad = MockWebhookReceiver(tls: other)
            do {
                let goodPort = try await good.start()
                let badPort = try await bad.start()
                let (goodEndpoint, secret) = try await db.store.webhooks.create(
                    applicationID: fixture.app.id, url: "https://localhost:\(goodPort)/hook", events: [.platformFailing])
                let (badEndpoint, _) = try await db.store.webhooks.create(
                    applicationID: fixture.app.id, url: "https://localhost:\(badPort)/hook", events: [.platformFailing])
                var configuration = Self.configuration()
                // Both CAs are trusted: only the name in the certificate differs.
                configuration.extraTrustedCAPEM = named.caCertificatePEM + "\n" + other.caCertificatePEM
                let service = WebhookService(store: db.store, configuration: configuration, logger: TestDatabase.logger)
                try await Self.running([service]) {
                    try await db.store.platforms.setCredentialsStatus(id: fixture.platform.id, .failing)
                    try await DeliveryWorld.poll("both endpoints were tried") {
                        let delivered = try await Self.record(db.store, goodEndpoint)?.state == "delivered"
                        let tried = try await Self.record(db.store, badEndpoint)?.attempts == 1
                        return delivered && tried
                    }
                }
                let received = good.received
                #expect(received.count == 1)
                #expect(received.first?.path == "/hook")
                #expect(
                    WebhookSignature.verify(
                        header: received.first?.signature ?? "", secret: secret, body: received.first?.body ?? [],
                        now: EpochClock.system.now.epochMilliseconds / 1000))
                #expect(bad.received.isEmpty)
                let refused = try #require(try await Self.record(db.store, badEndpoint))
                #expect(refused.lastStatus == nil)
                #expect(refused.lastError != nil)
                #expect(refused.state == "pending")
            } catch {
                await good.shutdown()
                await bad.shutdown()
                throw error
            }
            await good.shutdown()
            await bad.shutdown()
        }
    }

    /// Registration checks: https only (http where private addresses are allowed), no literal
    /// private, loopback or link-local address.
    @Test func webhookURLsAreCheckedAtRegistration() throws {
        let strict = WebhookAddressPolicy()
        for refused in [
            "http://hooks.example.com/x", "https://127.0.0.1/x", "https://[::1]/x", "https://10.1.2.3/x", "https://169.254.169.254/latest",
            "https://192.168.1.1:8443/x", "https://[fe80::1]/x", "https://[::ffff:127.0.0.1]/x", "ftp://hooks.example.com/x",
            "hooks.example.com",
            "https://user:pw@hooks.example.com/x", "https:///x",
        ] {
            #expect(throws: ValidationError.self, "\(refused)") { try WebhookTarget(url: refused, policy: strict) }
        }
        let target = try WebhookTarget(url: "https://hooks.example.com/herald", policy: strict)
        #expect(target.secure && target.host == "hooks.example.com" && target.port == 443)
        #expect(try WebhookTarget(url: "https://93.184.216.34:8443/x", policy: strict).port == 8443)
        let local = try WebhookTarget(url: "http://127.0.0.1:9/x", policy: WebhookAddressPolicy(allowsPrivate: true))
        #expect(!local.secure && local.host == "127.0.0.1" && local.port == 9)
    }
}
