import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldMocks
import HeraldTestSupport
import Testing

@testable import HeraldFCM

/// The FCM client against the mock FCM (token endpoint and messages:send), over real HTTP/2 and
/// TLS on 127.0.0.1.
@Suite struct FCMClientTests {
    struct Setup {
        let server: MockFCMServer
        let client: FCMClient
        let clock: TestClock
        let port: Int
        let tls: MockTLS
    }

    /// A mock that knows one service account of `demo-project` whose `token_uri` is the mock's.
    func withMock(
        projectID: String = "demo-project", proxy: OutboundProxy? = nil, protocols: [String] = ["h2", "http/1.1"],
        _ body: (Setup) async throws -> Void
    ) async throws {
        let tls = try MockTLS()
        let clock = TestClock()
        var behavior = MockFCMServer.Behavior()
        behavior.clock = clock.epochClock
        let server = MockFCMServer(tls: tls, behavior: behavior)
        let port = try await server.start(protocols: protocols)
        let client: FCMClient
        do {
            let json = try serviceAccountJSON(projectID: projectID, tokenURI: "https://127.0.0.1:\(port)/token")
            let account = try MockFCMServer.Account(serviceAccountJSON: json)
            server.update {
                $0.accounts[account.clientEmail] = MockFCMServer.Account(
                    clientEmail: account.clientEmail, projectID: "demo-project", publicKey: account.publicKey)
            }
            client = try FCMClient(
                credentials: try Self.credentials(json), endpoint: "https://127.0.0.1:\(port)", extraTrustedCAPEM: tls.caCertificatePEM,
                // Connections to the mock may wait for a loaded machine (a whole suite starting at
                // once on two cores took more than the 10 s default): these tests are not about
                // connect timeouts.
                proxy: proxy, connectTimeout: .seconds(60), clock: clock.epochClock)
        } catch {
            await server.shutdown()
            throw error
        }
        do {
            try await body(Setup(server: server, client: client, clock: clock, port: port, tls: tls))
        } catch {
            try? await client.shutdown()
            await server.shutdown()
            throw error
        }
        try await client.shutdown()
        await server.shutdown()
    }

    static func credentials(_ json: String) throws -> FCMCredentials {
        guard case .fcm(let credentials) = try CredentialsInput(serviceAccount: JSONText(json)).validate(for: .android) else {
            throw CancellationError()
        }
        return credentials
    }

    func message(_ json: String = #"{"message":{"body":"Hello"},"target":{"platform":"android"}}"#) throws -> FCMMessage {
        let push = try JSONDecoder().decode(PushInput.self, from: Data(json.utf8)).validated(now: 0)
        return try #require(try FCMRenderer.render(push, receiptID: "receipt-1", now: 0))
    }

    // MARK: Delivered

    /// An endpoint that does not offer h2 in ALPN (an HTTP/1.1-only server or TLS proxy in front
    /// of FCM) gets the messages over HTTP/1.1; they used to fail unanswered ("the server does not
    /// offer h2") and be retried for a day.
    @Test func anEndpointWithoutHTTP2GetsTheMessagesOverHTTP1() async throws {
        try await withMock(protocols: ["http/1.1"]) { setup in
            let tokens = (0..<20).map { _ in randomFCMToken() }
            let results = await setup.client.send(try message(), tokens: tokens)
            #expect(results.allSatisfy { if case .success(.delivered) = $0 { true } else { false } }, "\(results)")
            #expect(Set(setup.server.received.map(\.target)) == Set(tokens))
            #expect(setup.server.received.allSatisfy { $0.httpVersion.hasSuffix("1.1") })
            // The next batch goes straight over HTTP/1.1.
            let next = randomFCMToken()
            let again = await setup.client.send(try message(), tokens: [next])
            #expect(again.allSatisfy { if case .success(.delivered) = $0 { true } else { false } }, "\(again)")
            #expect(setup.server.received.contains { $0.target == next })
        }
    }

    /// A batch goes out on one HTTP/2 connection, kept open for the next; the count is what
    /// `/metrics` reports.
    @Test func aBatchSharesOneConnection() async throws {
        try await withMock { setup in
            #expect(setup.client.openConnections == 0)
            let tokens = (0..<50).map { _ in randomFCMToken() }
            let results = await setup.client.send(try message(), tokens: tokens)
            #expect(results.allSatisfy { if case .success(.delivered) = $0 { true } else { false } })
            #expect(Set(setup.server.received.map(\.target)) == Set(tokens))
            #expect(setup.client.openConnections == 1)
        }
    }

    @Test func aDeliveredMessageArrivesAsRendered() async throws {
        try await withMock { setup in
            let token = randomFCMToken()
            let json = #"""
                {"message":{"body":"Hello","custom":{"android":{"story":{"id":7},"collapse_key":"news","priority":"high"}}},
                 "target":{"platform":"android"},"expiryTime":3600000}
                """#
            let outcome = try await setup.client.send(try message(json), token: token)
            guard case .delivered(let name) = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(name.hasPrefix("projects/demo-project/messages/0:"))
            let received = try #require(setup.server.received.first)
            #expect(received.projectID == "demo-project")
            #expect(received.target == token)
            #expect(received.data == ["message": "Hello", "receiptId": "receipt-1", "story": #"{"id":7}"#])
            // A data message, the default since the PCF Android SDK needs one (FCMRendererTests).
            #expect(received["notification"] == nil)
            #expect(
                received["android"]
                    == .object([
                        "collapse_key": .string("news"), "priority": .string("high"), "ttl": .string("3600s"),
                    ]))
            #expect(setup.server.tokenRequests == 1)
        }
    }

    @Test func manyConcurrentSendsShareOneAccessTokenAndTheConnection() async throws {
        try await withMock { setup in
            let message = try message()
            let outcomes = try await withThrowingTaskGroup(of: FCMOutcome.self) { group in
                for _ in 0..<300 {
                    group.addTask { try await setup.client.send(message, token: randomFCMToken()) }
                }
                return try await group.reduce(into: [FCMOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.count == 300)
            #expect(outcomes.allSatisfy { if case .delivered = $0 { true } else { false } })
            #expect(setup.server.received.count == 300)
            #expect(setup.server.tokenRequests == 1)
            #expect(Set(setup.server.received.map(\.accessToken)).count == 1)
            #expect(Set(setup.server.received.map(\.httpVersion)) == ["HTTP/2.0"])
        }
    }

    // MARK: The token flow

    @Test func theAccessTokenIsRenewedFiveMinutesBeforeItExpires() async throws {
        try await withMock { setup in
            let message = try message()
            _ = try await setup.client.send(message, token: randomFCMToken())
            #expect(setup.server.tokenRequests == 1)
            setup.clock.advance(by: .seconds(3599 - 301))
            _ = try await setup.client.send(message, token: randomFCMToken())
            #expect(setup.server.tokenRequests == 1)
            setup.clock.advance(by: .seconds(1))
            let outcome = try await setup.client.send(message, token: randomFCMToken())
            guard case .delivered = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(setup.server.tokenRequests == 2)
            let used = setup.server.received.map(\.accessToken)
            #expect(used[0] == used[1] && used[1] != used[2])
            // Well past the first token's life, the second one is still good at the mock.
            setup.clock.advance(by: .seconds(3000))
            guard case .delivered = try await setup.client.send(message, token: randomFCMToken()) else {
                Issue.record("not delivered after renewal")
                return
            }
            #expect(setup.server.tokenRequests == 2)
        }
    }

    @Test func aRevokedAccessTokenIsReplacedOnceAndTheSendSucceeds() async throws {
        try await withMock { setup in
            let message = try message()
            _ = try await setup.client.send(message, token: randomFCMToken())
            setup.server.update { $0.rejectAccessTokens = 1 }
            let outcome = try await setup.client.send(message, token: randomFCMToken())
            guard case .delivered = outcome else {
                Issue.record("not delivered: \(outcome)")
                return
            }
            #expect(setup.server.tokenRequests == 2)
            #expect(setup.server.received.count == 2)
            // The fresh token was accepted, so a later revocation earns another refresh.
            setup.server.update { $0.rejectAccessTokens = 1 }
            guard case .delivered = try await setup.client.send(message, token: randomFCMToken()) else {
                Issue.record("not delivered after a second revocation")
                return
            }
            #expect(setup.server.tokenRequests == 3)
        }
    }

    @Test func aFreshTokenRefusedAgainMeansTheCredentialsAreFailing() async throws {
        try await withMock { setup in
            setup.server.update { $0.rejectAccessTokens = 2 }
            let outcome = try await setup.client.send(try message(), token: randomFCMToken())
            guard case .credentialsRejected(let rejection) = outcome else {
                Issue.record("not rejected: \(outcome)")
                return
            }
            #expect(rejection.status == 401)
            #expect(rejection.reason == .unauthenticated)
            #expect(setup.server.tokenRequests == 2)
            // From then on nothing is sent and no token is fetched.
            let later = try await setup.client.send(try message(), token: randomFCMToken())
            guard case .credentialsRejected = later else {
                Issue.record("not rejected: \(later)")
                return
            }
            #expect(setup.server.tokenRequests == 2)
            #expect(setup.server.received.isEmpty)
        }
    }

    @Test func aServiceAccountTheTokenEndpointRefusesIsCredentialsRejected() async throws {
        try await withMock { setup in
            // The endpoint knows the account's email with another key: the signature does not verify.
            let other = try MockFCMServer.Account(serviceAccountJSON: try serviceAccountJSON())
            setup.server.update { behavior in
                for email in behavior.accounts.keys {
                    behavior.accounts[email] = MockFCMServer.Account(
                        clientEmail: email, projectID: "demo-project", publicKey: other.publicKey)
                }
            }
            let outcome = try await setup.client.send(try message(), token: randomFCMToken())
            guard case .credentialsRejected(let rejection) = outcome else {
                Issue.record("not rejected: \(outcome)")
                return
            }
            #expect(rejection.status == 400)
            #expect(rejection.reason.name == "invalid_grant")
            #expect(rejection.message.contains("signature"))
            _ = try await setup.client.send(try message(), token: randomFCMToken())
            #expect(setup.server.tokenRequests == 1)
        }
    }

    @Test func aTokenEndpointThatIsDownMeansRetry() async throws {
        try await withMock { setup in
            setup.server.update { $0.tokenEndpointUnavailable = 1 }
            let outcome = try await setup.client.send(try message(), token: randomFCMToken())
            guard case .retry(let rejection, _) = outcome else {
                Issue.record("not retry: \(outcome)")
                return
            }
            #expect(rejection.status == 503)
            guard case .delivered = try await setup.client.send(try message(), token: randomFCMToken()) else {
                Issue.record("not delivered once the endpoint is back")
                return
            }
            #expect(setup.server.tokenRequests == 2)
        }
    }

    @Test func aTokenForAnotherProjectIsPermissionDenied() async throws {
        try await withMock(projectID: "other-project") { setup in
            let outcome = try await setup.client.send(try message(), token: randomFCMToken())
            guard case .credentialsRejected(let rejection) = outcome else {
                Issue.record("not rejected: \(outcome)")
                return
            }
            #expect(rejection.status == 403)
            #expect(rejection.reason == .permissionDenied)
        }
    }

    // MARK: Through a proxy

    @Test(arguments: [MockProxyServer.Kind.httpConnect, .socks5])
    func tokensAndMessagesGoThroughAnOutboundProxy(kind: MockProxyServer.Kind) async throws {
        let proxy = MockProxyServer(kind: kind)
        let proxyPort = try await proxy.start()
        let configuration = OutboundProxy(kind: kind == .httpConnect ? .httpConnect : .socks5, host: "127.0.0.1", port: proxyPort)
        do {
            try await withMock(proxy: configuration) { setup in
                let outcome = try await setup.client.send(try message(), token: randomFCMToken())
                guard case .delivered = outcome else {
                    Issue.record("not delivered: \(outcome)")
                    return
                }
                #expect(setup.server.tokenRequests == 1)
                #expect(!proxy.tunnels.isEmpty)
                #expect(proxy.tunnels.allSatisfy { $0.target == "127.0.0.1:\(setup.port)" })
            }
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }

    // MARK: Outcome classes

    @Test func deadTokensMeanTheDeviceIsGone() async throws {
        try await withMock { setup in
            let dead = randomFCMToken()
            setup.server.update { $0.unregistered = [dead] }
            let gone = try await setup.client.send(try message(), token: dead)
            #expect(gone == .deviceGone(FCMRejection(status: 404, reason: .unregistered, message: "Requested entity was not found.")))

            let malformed = try await setup.client.send(try message(), token: "not a token")
            guard case .deviceGone(let rejection) = malformed else {
                Issue.record("not gone: \(malformed)")
                return
            }
            #expect(rejection.status == 400)
            #expect(rejection.reason == .invalidArgument)
            #expect(setup.server.received.isEmpty)
        }
    }

    @Test func quotaAndUnavailabilityAreRetriedAfterRetryAfter() async throws {
        try await withMock { setup in
            setup.server.update {
                $0.quotaExceeded = 1
                $0.unavailable = 2
                $0.retryAfter = 30
            }
            let message = try message()
            let quota = try await setup.client.send(message, token: randomFCMToken())
            #expect(
                quota
                    == .retry(
                        FCMRejection(status: 429, reason: .quotaExceeded, message: "the sending quota is exceeded"),
                        retryAfter: .seconds(30)))
            for _ in 0..<2 {
                let unavailable = try await setup.client.send(message, token: randomFCMToken())
                guard case .retry(let rejection, let after) = unavailable else {
                    Issue.record("not retry: \(unavailable)")
                    return
                }
                #expect(rejection.status == 503 && rejection.reason == .unavailable && after == .seconds(30))
            }
            // The burst is over.
            guard case .delivered = try await setup.client.send(message, token: randomFCMToken()) else {
                Issue.record("not delivered after the burst")
                return
            }
        }
    }

    @Test func internalErrorsAreRetriedWithBackoff() async throws {
        try await withMock { setup in
            setup.server.update { $0.internalErrors = 1 }
            let outcome = try await setup.client.send(try message(), token: randomFCMToken())
            #expect(outcome == .retry(FCMRejection(status: 500, reason: .internalError, message: "internal error"), retryAfter: nil))
        }
    }

    @Test func senderMismatchesAndThirdPartyAuthErrorsRejectTheCredentials() async throws {
        try await withMock { setup in
            let foreign = randomFCMToken()
            let apple = randomFCMToken()
            setup.server.update {
                $0.senderIDMismatch = [foreign]
                $0.thirdPartyAuthError = [apple]
            }
            let mismatch = try await setup.client.send(try message(), token: foreign)
            guard case .credentialsRejected(let rejection) = mismatch else {
                Issue.record("not rejected: \(mismatch)")
                return
            }
            #expect(rejection.status == 403 && rejection.reason == .senderIDMismatch)

            // A 401 about the app's APNs credentials in Firebase: no access-token refresh helps.
            let thirdParty = try await setup.client.send(try message(), token: apple)
            guard case .credentialsRejected(let other) = thirdParty else {
                Issue.record("not rejected: \(thirdParty)")
                return
            }
            #expect(other.status == 401 && other.reason == .thirdPartyAuthError)
            #expect(setup.server.tokenRequests == 1)
        }
    }

    @Test func aMessageFCMRefusesFailsWithGooglesReason() async throws {
        try await withMock { setup in
            let reserved = FCMMessage(data: ["from": "me"])
            let outcome = try await setup.client.send(reserved, token: randomFCMToken())
            guard case .failed(let rejection) = outcome else {
                Issue.record("not failed: \(outcome)")
                return
            }
            #expect(rejection.status == 400)
            #expect(rejection.reason == .invalidArgument)
            #expect(rejection.message.contains("message.data[0].key"))

            let badTTL = FCMMessage(data: ["k": "v"], android: .init(ttlSeconds: 3_000_000))
            guard case .failed(let ttl) = try await setup.client.send(badTTL, token: randomFCMToken()) else {
                Issue.record("a ttl over four weeks was accepted")
                return
            }
            #expect(ttl.message.contains("message.android.ttl"))
            #expect(setup.server.received.isEmpty)
        }
    }

    @Test func theRequestBodyAddsTheTokenToTheRenderedMessage() throws {
        let body = String(decoding: FCMClient.requestBody(FCMMessage(data: ["a": "b"]), token: "t:1"), as: UTF8.self)
        #expect(body == #"{"message":{"token":"t:1","data":{"a":"b"}}}"#)
        let empty = String(decoding: FCMClient.requestBody(FCMMessage(data: [:]), token: "t"), as: UTF8.self)
        #expect(empty == #"{"message":{"token":"t"}}"#)
    }
}
