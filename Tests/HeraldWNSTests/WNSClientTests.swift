import Foundation
import HeraldCore
import HeraldMocks
import HeraldTestSupport
import Testing

@testable import HeraldWNS

/// The WNS client against the mock WNS (token endpoint and channels), over real HTTP/1.1 and TLS
/// on 127.0.0.1.
@Suite struct WNSClientTests {
    static let credentials = WNSCredentials(clientID: "ms-app://s-1-15-2-1-2-3", clientSecret: "Vex8L9WOFZuj95euaLrvSH7XyoDhLJc7")

    struct Setup {
        let server: MockWNSServer
        let client: WNSClient
        let clock: TestClock
        let tls: MockTLS
    }

    /// A mock that knows `credentials`, and a client allowed to send to it as its test host.
    func withMock(_ body: (Setup) async throws -> Void) async throws {
        let tls = try MockTLS()
        let clock = TestClock()
        var behavior = MockWNSServer.Behavior()
        behavior.clock = clock.epochClock
        behavior.clients[Self.credentials.clientID] = Self.credentials.clientSecret
        let server = MockWNSServer(tls: tls, behavior: behavior)
        _ = try await server.start()
        let client: WNSClient
        do {
            client = try WNSClient(
                credentials: Self.credentials, tokenEndpoint: server.tokenEndpoint, allowedTestHost: "127.0.0.1",
                extraTrustedCAPEM: tls.caCertificatePEM, clock: clock.epochClock)
        } catch {
            await server.shutdown()
            throw error
        }
        do {
            try await body(Setup(server: server, client: client, clock: clock, tls: tls))
        } catch {
            try? await client.shutdown()
            await server.shutdown()
            throw error
        }
        try await client.shutdown()
        await server.shutdown()
    }

    func notification(_ json: String = #"{"message":{"body":"Town Hall"},"target":{"platforms":["windows"]}}"#, now: Int64 = 0) throws
        -> WNSNotification
    {
        let push = try JSONDecoder().decode(PushInput.self, from: Data(json.utf8)).validated(now: now)
        return try #require(try WNSRenderer.render(push, receiptID: "receipt-1", now: now))
    }

    func rejection(_ outcome: WNSOutcome) -> WNSRejection? {
        switch outcome {
        case .delivered: nil
        case .deviceGone(let rejection), .credentialsRejected(let rejection), .failed(let rejection), .retry(let rejection, _): rejection
        }
    }

    // MARK: Delivered

    @Test func aToastArrivesAsRenderedWithItsHeaders() async throws {
        try await withMock { setup in
            let now = setup.clock.epochSeconds * 1000
            let toast = try notification(
                #"""
                {"message":{"body":"Town <Hall> & more","custom":{"windows8":{"options":{"tag":"townhall","group":"news",
                 "suppress_popup":true,"cache_policy":"no-cache"}}}},"target":{"platforms":["windows"]},"expiryTime":\#(now + 3_600_000)}
                """#, now: now)
            let channel = setup.server.channelURI(token: "device-1")
            let outcome = try await setup.client.send(toast, channelURI: channel)
            guard case .delivered(let delivery) = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(delivery.status == .received)
            #expect(delivery.messageID?.count == 16)

            let received = try #require(setup.server.received.first)
            #expect(received.channel == "device-1")
            #expect(received.type == "wns/toast")
            #expect(received.text == toast.payloadText)
            #expect(received.text.contains("Town &lt;Hall&gt; &amp; more"))
            #expect(received.headers["content-type"] == "text/xml")
            #expect(received.headers["x-wns-ttl"] == "3600")
            #expect(received.headers["x-wns-tag"] == "townhall")
            #expect(received.headers["x-wns-group"] == "news")
            #expect(received.headers["x-wns-suppresspopup"] == "true")
            #expect(received.headers["x-wns-cache-policy"] == "no-cache")
            #expect(received.headers["authorization"] == "Bearer \(received.accessToken)")
            #expect(setup.server.tokenRequests == 1)
        }
    }

    @Test func eachKindGoesWithItsContentType() async throws {
        try await withMock { setup in
            let kinds = [
                (#"{"type":"tile","template_fields":{"textField1":"3 new"}}"#, "wns/tile", "text/xml"),
                (#"{"type":"badge","template_fields":{"value":3}}"#, "wns/badge", "text/xml"),
                (#"{"type":"raw","payload":"sync"}"#, "wns/raw", "application/octet-stream"),
            ]
            for (block, type, contentType) in kinds {
                let rendered = try notification(#"{"message":{"custom":{"windows8":\#(block)}},"target":{"platforms":["windows"]}}"#)
                let outcome = try await setup.client.send(rendered, channelURI: setup.server.channelURI())
                guard case .delivered = outcome else {
                    Issue.record("\(type) not delivered: \(outcome)")
                    continue
                }
                let received = try #require(setup.server.received.last)
                #expect(received.type == type)
                #expect(received.headers["content-type"] == contentType)
                #expect(received.body == rendered.payload)
            }
            #expect(setup.server.received.count == 3)
        }
    }

    @Test func manyConcurrentSendsShareOneAccessToken() async throws {
        try await withMock { setup in
            let toast = try notification()
            let outcomes = try await withThrowingTaskGroup(of: WNSOutcome.self) { group in
                for index in 0..<100 {
                    group.addTask { try await setup.client.send(toast, channelURI: setup.server.channelURI(token: "d\(index)")) }
                }
                return try await group.reduce(into: [WNSOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { if case .delivered = $0 { true } else { false } })
            #expect(setup.server.received.count == 100)
            #expect(Set(setup.server.received.map(\.channel)).count == 100)
            #expect(setup.server.tokenRequests == 1)
            #expect(Set(setup.server.received.map(\.accessToken)).count == 1)
        }
    }

    // MARK: The token flow

    @Test func theAccessTokenIsRenewedFiveMinutesBeforeItExpires() async throws {
        try await withMock { setup in
            let toast = try notification()
            _ = try await setup.client.send(toast, channelURI: setup.server.channelURI())
            setup.clock.advance(by: .seconds(86_400 - 301))
            _ = try await setup.client.send(toast, channelURI: setup.server.channelURI())
            #expect(setup.server.tokenRequests == 1)
            setup.clock.advance(by: .seconds(1))
            let outcome = try await setup.client.send(toast, channelURI: setup.server.channelURI())
            guard case .delivered = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(setup.server.tokenRequests == 2)
            let tokens = setup.server.received.map(\.accessToken)
            #expect(tokens[0] == tokens[1])
            #expect(tokens[2] != tokens[1])
        }
    }

    @Test func aRevokedAccessTokenIsRefreshedOnceAndTheNotificationSentAgain() async throws {
        try await withMock { setup in
            let toast = try notification()
            _ = try await setup.client.send(toast, channelURI: setup.server.channelURI())
            setup.server.update { $0.rejectAccessTokens = 1 }
            let outcome = try await setup.client.send(toast, channelURI: setup.server.channelURI(token: "after-401"))
            guard case .delivered = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(setup.server.tokenRequests == 2)
            #expect(setup.server.received.map(\.channel).last == "after-401")
            // The fresh token was accepted: a later revocation earns another refresh.
            setup.server.update { $0.rejectAccessTokens = 1 }
            let again = try await setup.client.send(toast, channelURI: setup.server.channelURI())
            guard case .delivered = again else {
                Issue.record("not delivered: \(again)")
                return
            }
            #expect(setup.server.tokenRequests == 3)
        }
    }

    @Test func aFreshTokenRefusedToo401MeansTheCredentialsAreFailing() async throws {
        try await withMock { setup in
            let toast = try notification()
            setup.server.update { $0.rejectAccessTokens = 2 }
            let outcome = try await setup.client.send(toast, channelURI: setup.server.channelURI())
            guard case .credentialsRejected(let rejection) = outcome else {
                Issue.record("not refused: \(outcome)")
                return
            }
            #expect(rejection.status == 401)
            #expect(rejection.reason == .unauthorized)
            #expect(rejection.message == "the access token was revoked")
            #expect(setup.server.tokenRequests == 2)
            // Failing stays failing: nothing more is asked of the token endpoint or sent.
            let later = try await setup.client.send(toast, channelURI: setup.server.channelURI())
            guard case .credentialsRejected = later else {
                Issue.record("not refused: \(later)")
                return
            }
            #expect(setup.server.tokenRequests == 2)
            #expect(setup.server.received.isEmpty)
        }
    }

    @Test func aRefusedClientSecretMeansTheCredentialsAreRejected() async throws {
        try await withMock { setup in
            setup.server.update { $0.clients[Self.credentials.clientID] = "another secret" }
            let outcome = try await setup.client.send(try notification(), channelURI: setup.server.channelURI())
            guard case .credentialsRejected(let rejection) = outcome else {
                Issue.record("not refused: \(outcome)")
                return
            }
            #expect(rejection.status == 400)
            #expect(rejection.reason == .invalidClient)
            #expect(rejection.message.contains("the client secret is wrong"))
            _ = try await setup.client.send(try notification(), channelURI: setup.server.channelURI())
            #expect(setup.server.tokenRequests == 1)
        }
    }

    @Test func anUnavailableTokenEndpointMeansRetryLater() async throws {
        try await withMock { setup in
            setup.server.update { $0.tokenEndpointUnavailable = 1 }
            let outcome = try await setup.client.send(try notification(), channelURI: setup.server.channelURI())
            guard case .retry(let rejection, _) = outcome else {
                Issue.record("not a retry: \(outcome)")
                return
            }
            #expect(rejection.status == 503)
            let next = try await setup.client.send(try notification(), channelURI: setup.server.channelURI())
            guard case .delivered = next else {
                Issue.record("not delivered: \(next)")
                return
            }
            #expect(setup.server.tokenRequests == 2)
        }
    }

    // MARK: Outcomes

    @Test func goneAndUnknownChannelsMeanTheDeviceIsGone() async throws {
        try await withMock { setup in
            setup.server.update {
                $0.gone = ["expired"]
                $0.notFound = ["unknown"]
            }
            let gone = try await setup.client.send(try notification(), channelURI: setup.server.channelURI(token: "expired"))
            guard case .deviceGone(let expired) = gone else {
                Issue.record("not gone: \(gone)")
                return
            }
            #expect(expired.status == 410)
            #expect(expired.reason == .channelExpired)
            #expect(expired.message == "the channel expired")
            #expect(expired.messageID != nil)
            #expect(expired.debugTrace == "MOCK")
            let unknown = try await setup.client.send(try notification(), channelURI: setup.server.channelURI(token: "unknown"))
            guard case .deviceGone(let notFound) = unknown else {
                Issue.record("not gone: \(unknown)")
                return
            }
            #expect(notFound.reason == .channelNotFound)
        }
    }

    @Test func throttlingIsARetryAfterWhatWNSSays() async throws {
        try await withMock { setup in
            setup.server.update {
                $0.throttled = 1
                $0.continueAfter = "120"
                $0.serviceUnavailable = 1
                $0.retryAfter = "30"
                $0.internalErrors = 1
            }
            let throttled = try await setup.client.send(try notification(), channelURI: setup.server.channelURI())
            guard case .retry(let throttle, let retryAfter) = throttled else {
                Issue.record("not a retry: \(throttled)")
                return
            }
            #expect(throttle.status == 406)
            #expect(throttle.reason == .throttled)
            #expect(retryAfter == .seconds(120))
            let unavailable = try await setup.client.send(try notification(), channelURI: setup.server.channelURI())
            #expect(unavailable == .retry(try #require(rejection(unavailable)), retryAfter: .seconds(30)))
            #expect(rejection(unavailable)?.reason == .serviceUnavailable)
            let internalError = try await setup.client.send(try notification(), channelURI: setup.server.channelURI())
            guard case .retry(let failed, nil) = internalError else {
                Issue.record("not a plain retry: \(internalError)")
                return
            }
            #expect(failed.status == 500)
            #expect(setup.server.received.isEmpty)
        }
    }

    @Test func aChannelOfAnotherAppMeansTheCredentialsAreRejected() async throws {
        try await withMock { setup in
            setup.server.update { $0.forbidden = ["other-app"] }
            let outcome = try await setup.client.send(try notification(), channelURI: setup.server.channelURI(token: "other-app"))
            guard case .credentialsRejected(let rejection) = outcome else {
                Issue.record("not refused: \(outcome)")
                return
            }
            #expect(rejection.status == 403)
            #expect(rejection.reason == .forbidden)
            #expect(setup.server.tokenRequests == 1)
        }
    }

    @Test func aBadOrOversizedNotificationFailsWithWNSsReason() async throws {
        try await withMock { setup in
            let big = WNSNotification(kind: .raw, payload: Array(repeating: 0x61, count: 5001))
            let tooLarge = try await setup.client.send(big, channelURI: setup.server.channelURI())
            guard case .failed(let large) = tooLarge else {
                Issue.record("not failed: \(tooLarge)")
                return
            }
            #expect(large.status == 413)
            #expect(large.reason == .payloadTooLarge)
            #expect(large.message == "the payload is 5001 bytes, over the 5000-byte limit")

            let mislabelled = WNSNotification(kind: .tile, payload: Array("<toast/>".utf8))
            let bad = try await setup.client.send(mislabelled, channelURI: setup.server.channelURI())
            guard case .failed(let badRequest) = bad else {
                Issue.record("not failed: \(bad)")
                return
            }
            #expect(badRequest.status == 400)
            #expect(badRequest.reason == .badRequest)
            #expect(badRequest.message == "a wns/tile notification is XML with a <tile> root element")
            #expect(setup.server.received.isEmpty)
        }
    }

    // MARK: Where notifications may go

    @Test func channelsOffWNSAreRefusedBeforeAnythingIsSent() async throws {
        try await withMock { setup in
            // This client has no test host: only *.notify.windows.com.
            let strict = try WNSClient(
                credentials: Self.credentials, tokenEndpoint: setup.server.tokenEndpoint, extraTrustedCAPEM: setup.tls.caCertificatePEM)
            for channel in [setup.server.channelURI(), "https://push.example.net/w/?token=x", "http://db5.notify.windows.com/w/?token=x"] {
                let error = await #expect(throws: WNSError.self, "\(channel)") {
                    try await strict.send(try notification(), channelURI: channel)
                }
                #expect(error == .channelNotAllowed, "\(channel)")
            }
            let error = await #expect(throws: WNSError.self) {
                try await strict.send(try notification(), channelURI: setup.server.channelURI())
            }
            #expect(error?.message == "'127.0.0.1' is not a WNS host: channel URIs are on hosts ending in .notify.windows.com")
            // The test host is the only exception the other client has.
            let other = await #expect(throws: WNSError.self) {
                try await setup.client.send(try notification(), channelURI: "https://localhost:1/w/?token=x")
            }
            #expect(other == .channelNotAllowed)
            try await strict.shutdown()
            #expect(setup.server.tokenRequests == 0)
            #expect(setup.server.received.isEmpty)
        }
    }

    @Test func anEndpointOverrideSendsWNSChannelsToATestServer() async throws {
        try await withMock { setup in
            let client = try WNSClient(
                credentials: Self.credentials, tokenEndpoint: setup.server.tokenEndpoint, endpointOverride: setup.server.origin,
                extraTrustedCAPEM: setup.tls.caCertificatePEM, clock: setup.clock.epochClock)
            let outcome = try await client.send(try notification(), channelURI: "https://wns2-by3p.notify.windows.com/w/?token=AwYAAAD%2bQ")
            try await client.shutdown()
            guard case .delivered = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(setup.server.received.first?.channel == "AwYAAAD+Q")
            #expect(setup.server.received.first?.headers["host"]?.hasPrefix("127.0.0.1:") == true)
        }
    }

    @Test func badEndpointsAreRefusedWhenTheClientIsMade() {
        #expect(throws: WNSError.invalidEndpoint) {
            try WNSClient(credentials: Self.credentials, tokenEndpoint: "login.live.com/accesstoken.srf")
        }
        #expect(throws: WNSError.invalidEndpoint) {
            try WNSClient(credentials: Self.credentials, endpointOverride: "ftp://127.0.0.1")
        }
    }
}
