import Crypto
import Foundation
import HeraldCore
import HeraldMocks
import HeraldTestSupport
import HeraldWebPush
import Testing

/// The Web Push client against the mock push service, over real TLS on 127.0.0.1: the mock
/// checks VAPID and the RFC 8030 headers and decrypts every message with the subscription's key.
@Suite struct WebPushClientTests {
    struct Setup {
        let server: MockWebPushServer
        let client: WebPushClient
        let signer: VAPIDSigner
        let clock: TestClock
        let tls: MockTLS
    }

    func withMock(protocols: [String] = ["h2", "http/1.1"], _ body: (Setup) async throws -> Void) async throws {
        let tls = try MockTLS()
        let clock = TestClock(epochSeconds: Int64(Date().timeIntervalSince1970))
        var behavior = MockWebPushServer.Behavior()
        behavior.clock = clock.epochClock
        let server = MockWebPushServer(tls: tls, behavior: behavior, protocols: protocols)
        _ = try await server.start()
        let client = try WebPushClient(extraTrustedCAPEM: tls.caCertificatePEM, clock: clock.epochClock)
        let signer = try VAPIDSigner(credentials: vapidCredentials(), clock: clock.epochClock)
        do {
            try await body(Setup(server: server, client: client, signer: signer, clock: clock, tls: tls))
        } catch {
            try? await client.shutdown()
            await server.shutdown()
            throw error
        }
        try await client.shutdown()
        await server.shutdown()
    }

    func subscription(_ subscriber: MockWebPushSubscriber, at server: MockWebPushServer) throws -> WebPushSubscription {
        try WebPushSubscription(json: subscriber.subscriptionJSON(origin: server.origin))
    }

    func notification(_ json: String, receiptID: String = "receipt-1", now: Int64 = 1_800_000_000_000) throws -> WebPushNotification {
        let input = try JSONDecoder().decode(PushInput.self, from: Data(json.utf8))
        return try #require(try WebPushRenderer.render(try input.validated(now: now), receiptID: receiptID, now: now))
    }

    @Test func aMessageArrivesDecryptedWithTheRFC8030Headers() async throws {
        try await withMock { setup in
            let subscriber = setup.server.subscribe(applicationServerKey: setup.signer.publicKey)
            let message = try notification(
                #"""
                {"message":{"body":"Town Hall this Thursday","custom":{"web":{"title":"News","icon":"/icon.png",
                 "data":{"url":"https://example.com/town-hall"},"urgency":"high","collapse_key":"town-hall"}}},
                 "target":{"platforms":["web"]},"expiryTime":1800000090500}
                """#)
            let outcome = try await setup.client.send(message, to: try subscription(subscriber, at: setup.server), vapid: setup.signer)
            guard case .delivered(let location?) = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(location.hasPrefix(setup.server.origin + "/message/"))

            let received = try #require(setup.server.received.first)
            #expect(received.subscriptionID == subscriber.id)
            #expect(received.plaintext == message.payload)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(received.plaintext)) as? [String: Any])
            #expect(json["title"] as? String == "News")
            #expect(json["body"] as? String == "Town Hall this Thursday")
            #expect(json["icon"] as? String == "/icon.png")
            #expect((json["data"] as? [String: String]) == ["url": "https://example.com/town-hall"])
            #expect(json["receiptId"] as? String == "receipt-1")
            #expect(json["urgency"] == nil && json["collapse_key"] == nil)
            #expect(received.headers["ttl"] == "91")
            #expect(received.headers["urgency"] == "high")
            #expect(received.headers["topic"] == "town-hall")
            #expect(received.headers["content-encoding"] == "aes128gcm")
            #expect(received.httpVersion == "HTTP/2.0")
        }
    }

    /// Many subscriptions of one push service: one batch, one HTTP/2 connection, each message
    /// decrypted by its own subscriber.
    @Test func aBatchForOnePushServiceSharesOneConnection() async throws {
        try await withMock { setup in
            let subscribers = (0..<20).map { _ in setup.server.subscribe() }
            let message = try notification(#"{"message":{"body":"to all"},"target":{"platforms":["web"]}}"#)
            let results = await setup.client.send(
                message, to: try subscribers.map { try subscription($0, at: setup.server) }, vapid: setup.signer)
            #expect(results.allSatisfy { if case .success(.delivered) = $0 { true } else { false } })
            #expect(Set(setup.server.received.map(\.subscriptionID)) == Set(subscribers.map(\.id)))
            #expect(setup.server.received.allSatisfy { $0.httpVersion == "HTTP/2.0" })
            #expect(setup.client.openConnections == 1)
        }
    }

    @Test func anHTTP1OnlyPushServiceWorksToo() async throws {
        try await withMock(protocols: ["http/1.1"]) { setup in
            let subscriber = setup.server.subscribe()
            let message = try notification(#"{"message":{"body":"over HTTP/1.1"},"target":{"platforms":["web"]}}"#)
            for _ in 0..<3 {
                let outcome = try await setup.client.send(message, to: try subscription(subscriber, at: setup.server), vapid: setup.signer)
                guard case .delivered = outcome else {
                    Issue.record("not delivered: \(outcome)")
                    return
                }
            }
            #expect(setup.server.received.map(\.httpVersion) == ["HTTP/1.1", "HTTP/1.1", "HTTP/1.1"])
            #expect(setup.server.received.first?.headers["ttl"] == String(WebPushRenderer.maximumTTL))
            #expect(setup.server.received.first?.headers["urgency"] == "normal")
            #expect(setup.server.received.first?.headers["topic"] == nil)
        }
    }

    @Test func goneAndUnknownSubscriptionsMeanTheDeviceIsGone() async throws {
        try await withMock { setup in
            let message = try notification(#"{"message":{"body":"hi"},"target":{"platforms":["web"]}}"#)
            let gone = setup.server.subscribe()
            setup.server.update { $0.gone.insert(gone.id) }
            let first = try await setup.client.send(message, to: try subscription(gone, at: setup.server), vapid: setup.signer)
            #expect(first == .deviceGone(.gone))
            let unknown = MockWebPushSubscriber()
            let second = try await setup.client.send(message, to: try subscription(unknown, at: setup.server), vapid: setup.signer)
            #expect(second == .deviceGone(.notFound))
            #expect(setup.server.received.isEmpty)
        }
    }

    @Test func throttlingAndOutagesAreRetriedHonouringRetryAfter() async throws {
        try await withMock { setup in
            let subscriber = setup.server.subscribe()
            let target = try subscription(subscriber, at: setup.server)
            let message = try notification(#"{"message":{"body":"hi"},"target":{"platforms":["web"]}}"#)

            setup.server.update {
                $0.tooManyRequests = 1
                $0.retryAfter = "30"
            }
            #expect(
                try await setup.client.send(message, to: target, vapid: setup.signer) == .retry(.tooManyRequests, retryAfter: .seconds(30)))

            // Retry-After as an HTTP date, read on the client's clock.
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let date = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(setup.clock.epochSeconds + 120)))
            setup.server.update {
                $0.serviceUnavailable = 2
                $0.retryAfter = date
            }
            #expect(
                try await setup.client.send(message, to: target, vapid: setup.signer)
                    == .retry(.serviceUnavailable, retryAfter: .seconds(120)))
            setup.server.update { $0.retryAfter = nil }
            #expect(try await setup.client.send(message, to: target, vapid: setup.signer) == .retry(.serviceUnavailable, retryAfter: nil))
            // The burst is over.
            guard case .delivered = try await setup.client.send(message, to: target, vapid: setup.signer) else {
                Issue.record("not delivered after the burst")
                return
            }
            #expect(setup.server.received.count == 1)
        }
    }

    @Test func refusedMessagesFailWithTheReasonAndTheServicesExplanation() async throws {
        try await withMock { setup in
            let target = try subscription(setup.server.subscribe(), at: setup.server)
            // 4000 bytes of plaintext encrypt to 4103: over the push service's 4096.
            let huge = WebPushNotification(payload: Array(repeating: UInt8(ascii: "x"), count: 4000), ttl: 60)
            guard case .failed(let reason, let detail) = try await setup.client.send(huge, to: target, vapid: setup.signer) else {
                Issue.record("a 4103-byte body was not refused")
                return
            }
            #expect(reason == .payloadTooLarge)
            #expect(reason.name == "PayloadTooLarge")
            #expect(detail.contains("4103"))

            let badTopic = WebPushNotification(payload: Array("{}".utf8), ttl: 60, topic: "not a topic!")
            guard case .failed(let reason, let detail) = try await setup.client.send(badTopic, to: target, vapid: setup.signer) else {
                Issue.record("a bad topic was not refused")
                return
            }
            #expect(reason == .badRequest)
            #expect(detail.contains("Topic"))
            #expect(setup.server.received.isEmpty)
        }
    }

    @Test func refusedVAPIDMeansCredentialsRejectedAndANewTokenNextTime() async throws {
        try await withMock { setup in
            // A subscription made for another application server key.
            let other = P256.Signing.PrivateKey()
            let foreign = setup.server.subscribe(applicationServerKey: Base64URL.encode(Array(other.publicKey.x963Representation)))
            let message = try notification(#"{"message":{"body":"hi"},"target":{"platforms":["web"]}}"#)
            let outcome = try await setup.client.send(message, to: try subscription(foreign, at: setup.server), vapid: setup.signer)
            guard case .credentialsRejected(let reason, let detail) = outcome else {
                Issue.record("not rejected: \(outcome)")
                return
            }
            #expect(reason == .forbidden)
            #expect(detail.contains("application server key"))

            // The push service's clock is a day ahead: the token has expired, and is re-signed after the rejection.
            let subscriber = setup.server.subscribe()
            let target = try subscription(subscriber, at: setup.server)
            guard case .delivered = try await setup.client.send(message, to: target, vapid: setup.signer) else {
                Issue.record("not delivered")
                return
            }
            let firstAuthorization = try #require(setup.server.received.last?.headers["authorization"])
            let clock = setup.clock
            setup.server.update { behavior in
                let ahead = clock.epochSeconds + 13 * 3600
                behavior.clock = EpochClock { .seconds(ahead) }
            }
            guard case .credentialsRejected(.forbidden, let expired) = try await setup.client.send(message, to: target, vapid: setup.signer)
            else {
                Issue.record("an expired token was accepted")
                return
            }
            #expect(expired.contains("expired"))
            setup.clock.advance(by: .seconds(13 * 3600))
            guard case .delivered = try await setup.client.send(message, to: target, vapid: setup.signer) else {
                Issue.record("not delivered with a new token")
                return
            }
            #expect(try #require(setup.server.received.last?.headers["authorization"]) != firstAuthorization)
        }
    }

    /// The delivery engine's `ProviderClient`: an address that is no subscription fails
    /// `InvalidSubscription`; a subscription made for another key fails alone, unless every
    /// message of the batch is refused, which rejects the platform's credentials.
    @Test func thePlatformClientFailsForeignSubscriptionsAloneAndRejectsTheKeyWhenAllAreRefused() async throws {
        try await withMock { setup in
            let platform = WebPushPlatformClient(client: setup.client, vapid: setup.signer)
            let other = P256.Signing.PrivateKey()
            let foreignKey = Base64URL.encode(Array(other.publicKey.x963Representation))
            let foreign = setup.server.subscribe(applicationServerKey: foreignKey).subscriptionJSON(origin: setup.server.origin)
            let own = setup.server.subscribe().subscriptionJSON(origin: setup.server.origin)
            let message = try notification(#"{"message":{"body":"hi"},"target":{"platforms":["web"]}}"#)

            let mixed = await platform.send(message, to: [own, "not a subscription", foreign])
            #expect(mixed == [.delivered, .failed(.invalidSubscription), .failed(.forbidden)])
            #expect("\(WebPushErrorReason.invalidSubscription)" == "InvalidSubscription")

            let allForeign = await platform.send(message, to: [foreign, foreign])
            #expect(allForeign == [.credentialsRejected(.forbidden), .credentialsRejected(.forbidden)])
        }
    }

    @Test func theTokenIsReusedAcrossMessagesUntilItIsRenewed() async throws {
        try await withMock { setup in
            let target = try subscription(setup.server.subscribe(), at: setup.server)
            let message = try notification(#"{"message":{"body":"hi"},"target":{"platforms":["web"]}}"#)
            for _ in 0..<3 {
                _ = try await setup.client.send(message, to: target, vapid: setup.signer)
                setup.clock.advance(by: .seconds(3 * 3600))
            }
            // Sent at 0, 3 and 6 hours: one token. At 11 hours a new one.
            setup.clock.advance(by: .seconds(2 * 3600))
            _ = try await setup.client.send(message, to: target, vapid: setup.signer)
            let authorizations = setup.server.received.map { $0.headers["authorization"] ?? "" }
            #expect(authorizations.count == 4)
            #expect(Set(authorizations.prefix(3)).count == 1)
            #expect(authorizations[3] != authorizations[0])
            let renewed = try VAPIDHeader(authorizations[3])
            #expect(renewed.claims["aud"] as? String == setup.server.origin)
            #expect((renewed.claims["exp"] as? NSNumber)?.int64Value == setup.clock.epochSeconds + 12 * 3600)
        }
    }

    @Test func theEndpointOverrideSendsToATestPushService() async throws {
        try await withMock { setup in
            let subscriber = setup.server.subscribe()
            let client = try WebPushClient(
                endpointOverride: setup.server.origin, extraTrustedCAPEM: setup.tls.caCertificatePEM, clock: setup.clock.epochClock)
            let message = try notification(#"{"message":{"body":"redirected"},"target":{"platforms":["web"]}}"#)
            let outcome = try await client.send(
                message, to: try WebPushSubscription(json: subscriber.subscriptionJSON(origin: "https://fcm.googleapis.com")),
                vapid: setup.signer)
            try await client.shutdown()
            guard case .delivered = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(setup.server.received.first?.text.contains("redirected") == true)
            #expect(throws: WebPushError.invalidEndpoint) { try WebPushClient(endpointOverride: "not a url") }
        }
    }
}
