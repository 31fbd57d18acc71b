import Crypto
import Foundation
import HeraldAPNs
import HeraldCore
import HeraldHTTP
import HeraldMocks
import HeraldTestSupport
import NIOCore
import NIOSSL
import Testing

/// The APNs client against the mock APNs, over real HTTP/2 and TLS on 127.0.0.1.
@Suite struct APNsClientTests {
    struct Setup {
        let server: MockAPNsServer
        let client: APNsClient
        let generator: APNsTokenGenerator
        let key: P256.Signing.PrivateKey
    }

    func withMock(requestTimeout: TimeAmount = .seconds(30), _ body: (Setup) async throws -> Void) async throws {
        let mock = try await SignedMockAPNs.start()
        let server = mock.server
        let client = try APNsClient(
            endpoint: "https://127.0.0.1:\(mock.port)", extraTrustedCAPEM: mock.tls.caCertificatePEM,
            // Connections open in well under a second alone; in the whole suite on two cores CI
            // saw a TLS handshake wait past the 10 s default.
            connectTimeout: .seconds(30), requestTimeout: requestTimeout)
        do {
            try await body(Setup(server: server, client: client, generator: try mock.generator(), key: mock.key))
        } catch {
            await client.shutdown()
            await server.shutdown()
            throw error
        }
        await client.shutdown()
        await server.shutdown()
    }

    func notification(_ body: String = "Hello") throws -> APNsNotification {
        let push = try PushInput(message: .init(body: body), target: .init(platform: "ios")).validated(now: 0)
        return try #require(try APNsRenderer.render(push, receiptID: "receipt-1"))
    }

    var now: Int64 { Int64(Date().timeIntervalSince1970) }

    @Test func anAcceptedNotificationArrivesWithApplesHeaders() async throws {
        try await withMock { setup in
            let token = randomAPNsToken()
            let apnsID = UUID()
            let outcome = try await setup.client.send(
                try notification(), deviceToken: token, topic: "com.example.app",
                bearer: try setup.generator.token(issuedAt: now), apnsID: apnsID)
            #expect(outcome == .accepted(apnsID: apnsID.uuidString.lowercased()))
            let received = try #require(setup.server.received.first)
            #expect(received.deviceToken == token)
            #expect(received.headers["apns-topic"] == "com.example.app")
            #expect(received.headers["apns-push-type"] == "alert")
            #expect(received.headers["apns-priority"] == "10")
            let payload = try JSONSerialization.jsonObject(with: Data(received.payload)) as? [String: Any]
            #expect(payload?["receiptId"] as? String == "receipt-1")
        }
    }

    /// An answer that does not come within the request timeout fails the send (to be sent again
    /// by the engine) instead of holding it; the connection is then left for a new one.
    @Test func aRequestWithoutAnAnswerFailsAtItsDeadline() async throws {
        try await withMock(requestTimeout: .milliseconds(200)) { setup in
            let bearer = try setup.generator.token(issuedAt: now)
            // The answer would come after 5 s: without a deadline the send would wait and succeed.
            setup.server.update { $0.responseDelay = .seconds(5) }
            await #expect(throws: ProviderSendError.self) {
                try await setup.client.send(try notification(), deviceToken: randomAPNsToken(), topic: "com.example.app", bearer: bearer)
            }
            setup.server.update { $0.responseDelay = .zero }
            // The next send goes over a new connection. On a loaded machine its handshake and
            // answer may themselves miss the 200 ms: try again, within a deadline.
            let deadline = ContinuousClock.now + .seconds(20)
            var outcome: APNsOutcome?
            while outcome == nil, ContinuousClock.now < deadline {
                outcome = try? await setup.client.send(
                    try notification(), deviceToken: randomAPNsToken(), topic: "com.example.app", bearer: bearer)
            }
            guard case .accepted = outcome else {
                Issue.record("expected an accepted notification, got \(String(describing: outcome))")
                return
            }
            #expect(setup.server.statistics.connections >= 2)
        }
    }

    @Test func rejectionsCarryApplesReasons() async throws {
        try await withMock { setup in
            let dead = randomAPNsToken()
            setup.server.update { $0.unregistered[dead] = 1_700_000_000_000 }
            let bearer = try setup.generator.token(issuedAt: now)
            let gone = try await setup.client.send(try notification(), deviceToken: dead, topic: "t", bearer: bearer)
            #expect(gone == .rejected(status: 410, reason: .unregistered, timestamp: 1_700_000_000_000))
            #expect(APNsErrorReason.unregistered.meansDeviceGone)

            let bad = try await setup.client.send(try notification(), deviceToken: "abcd", topic: "t", bearer: bearer)
            #expect(bad == .rejected(status: 400, reason: .badDeviceToken, timestamp: nil))

            let stale = try setup.generator.token(issuedAt: now - 3700)
            let expired = try await setup.client.send(try notification(), deviceToken: randomAPNsToken(), topic: "t", bearer: stale)
            #expect(expired == .rejected(status: 403, reason: .expiredProviderToken, timestamp: nil))
            #expect(APNsErrorReason.expiredProviderToken.meansCredentialsRejected)

            let otherKey = try APNsTokenGenerator(
                credentials: APNsTokenCredentials(
                    privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ",
                    topic: "t", environment: .sandbox))
            let forged = try await setup.client.send(
                try notification(), deviceToken: randomAPNsToken(), topic: "t", bearer: try otherKey.token(issuedAt: now))
            #expect(forged == .rejected(status: 403, reason: .invalidProviderToken, timestamp: nil))

            let missing = try await setup.client.send(try notification(), deviceToken: randomAPNsToken(), topic: "t", bearer: nil)
            #expect(missing == .rejected(status: 403, reason: .missingProviderToken, timestamp: nil))

            var huge = try notification()
            huge.payload = Array(repeating: UInt8(ascii: "x"), count: 5000)
            let tooLarge = try await setup.client.send(huge, deviceToken: randomAPNsToken(), topic: "t", bearer: bearer)
            #expect(tooLarge == .rejected(status: 413, reason: .payloadTooLarge, timestamp: nil))
            #expect(setup.server.received.isEmpty)
        }
    }

    /// Certificate-based auth: the .p12's certificate opens the connection, no provider token is sent.
    @Test func aClientCertificateAuthenticatesWithoutAProviderToken() async throws {
        let p12 = try #require(Base64URL.decode(P12Fixtures.legacy))
        let bundle = try NIOSSLPKCS12Bundle(buffer: p12, passphrase: Array(P12Fixtures.password.utf8))
        let tls = try MockTLS()
        let server = MockAPNsServer(tls: tls, clientCertificateRoots: bundle.certificateChain)
        let port = try await server.start()
        let credentials = APNsCertificateCredentials(
            pkcs12: p12, password: P12Fixtures.password, topic: "com.example.app", environment: .sandbox)
        let client = try APNsClient(
            endpoint: "https://127.0.0.1:\(port)", extraTrustedCAPEM: tls.caCertificatePEM, clientCertificate: credentials)
        let anonymous = try APNsClient(
            endpoint: "https://127.0.0.1:\(port)", extraTrustedCAPEM: tls.caCertificatePEM, connectTimeout: .seconds(1))
        do {
            let outcome = try await client.send(try notification(), deviceToken: randomAPNsToken(), topic: "com.example.app", bearer: nil)
            guard case .accepted = outcome else {
                Issue.record("not accepted: \(outcome)")
                throw CancellationError()
            }
            #expect(server.received.count == 1)
            // Without the certificate the TLS handshake fails: nothing reaches the mock.
            await #expect(throws: (any Error).self) {
                try await anonymous.send(try notification(), deviceToken: randomAPNsToken(), topic: "com.example.app", bearer: nil)
            }
            #expect(server.received.count == 1)
        } catch {
            await client.shutdown()
            await anonymous.shutdown()
            await server.shutdown()
            throw error
        }
        await client.shutdown()
        await anonymous.shutdown()
        await server.shutdown()
    }

    /// Like Apple with token auth, the mock starts a connection at one stream and raises the
    /// limit after the first valid token; async-http-client keeps to 1, then uses the new limit.
    @Test func manyConcurrentSendsShareTheConnection() async throws {
        try await withMock { setup in
            // Answers held a moment, so that the mock sees the streams the client keeps open at
            // once (it answers a request as soon as it is whole otherwise).
            setup.server.update { $0.responseDelay = .milliseconds(20) }
            let bearer = try setup.generator.token(issuedAt: now)
            let message = try notification()
            let outcomes = try await withThrowingTaskGroup(of: APNsOutcome.self) { group in
                for _ in 0..<300 {
                    group.addTask {
                        try await setup.client.send(message, deviceToken: randomAPNsToken(), topic: "com.example.app", bearer: bearer)
                    }
                }
                return try await group.reduce(into: [APNsOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.count == 300)
            #expect(outcomes.allSatisfy { if case .accepted = $0 { true } else { false } })
            #expect(setup.server.received.count == 300)
            let statistics = setup.server.statistics
            // A few connections at most (past 250 requests in flight on one, another is opened),
            // each starting at one stream until its first token was accepted.
            #expect((1...4).contains(statistics.connections))
            #expect((1...statistics.connections).contains(statistics.streamLimitRaises))
            #expect(statistics.peakStreamsBeforeRaise == 1)
            #expect(statistics.peakStreams > 1)
        }
    }

    /// Apple raises the stream limit per connection, after that connection's first valid token:
    /// each connection the pool opens must start at one stream and then use the raised limit
    /// (a client that ramps up only its first connection runs the others one stream at a time).
    @Test func everyConnectionRampsUpAfterItsFirstToken() async throws {
        try await withMock { setup in
            // Answers held a moment, so that the mock sees the streams a connection keeps open at once.
            setup.server.update { $0.responseDelay = .milliseconds(2) }
            let bearer = try setup.generator.token(issuedAt: now)
            let message = try notification()
            // Four batches larger than one connection's share (250): the pool opens several connections.
            let results = await withTaskGroup(of: [Result<APNsOutcome, ProviderSendError>].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        await setup.client.send(
                            message, deviceTokens: (0..<260).map { _ in randomAPNsToken() }, topic: "com.example.app", bearer: bearer)
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
            #expect(results.count == 1040)
            #expect(results.allSatisfy { if case .success(.accepted) = $0 { true } else { false } })
            let statistics = setup.server.statistics
            #expect(statistics.connections >= 2)
            // Every connection that carried requests had its limit raised and then used it.
            #expect(statistics.streamLimitRaises >= 2)
            #expect(statistics.concurrentConnections == statistics.streamLimitRaises)
            #expect(statistics.peakStreamsBeforeRaise == 1)
        }
    }

    /// Sends `count` notifications at once; the outcome of each, or the error it threw.
    func sendConcurrently(_ count: Int, _ setup: Setup) async throws -> [Result<APNsOutcome, any Error>] {
        let bearer = try setup.generator.token(issuedAt: now)
        let message = try notification()
        return await withTaskGroup(of: Result<APNsOutcome, any Error>.self) { group in
            for _ in 0..<count {
                group.addTask {
                    do {
                        return .success(try await setup.client.send(message, deviceToken: randomAPNsToken(), topic: "t", bearer: bearer))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// GOAWAY after 10 streams: the streams it names are answered; the client's later streams on
    /// that connection were not processed, so the client sends them again on a new connection —
    /// every send is accepted, and none twice.
    @Test func aGoAwayAnswersItsStreamsAndRefusesTheLaterOnes() async throws {
        try await withMock { setup in
            setup.server.update {
                $0.goAwayAfterStreams = 10
                $0.responseDelay = .milliseconds(20)
            }
            let outcomes = try await sendConcurrently(50, setup)
            let accepted = outcomes.filter { if case .success(.accepted) = $0 { true } else { false } }.count
            let failed = outcomes.filter { if case .failure = $0 { true } else { false } }.count
            #expect(accepted == 50, "\(accepted) accepted, \(failed) failed")
            // A refused stream was never processed: the mock accepted each notification once.
            #expect(setup.server.received.count == 50)
            #expect(Set(setup.server.received.map(\.deviceToken)).count == 50)
            #expect(await goAwaysSent(by: setup.server) >= 1)

            setup.server.update { $0.goAwayAfterStreams = 0 }
            let again = try await sendConcurrently(20, setup)
            #expect(again.allSatisfy { if case .success(.accepted) = $0 { true } else { false } })
            #expect(setup.server.statistics.connections >= 2)
        }
    }

    /// A reset every third request on a connection: that request's answer is lost although the
    /// mock accepted it; the pool sends it again on a new connection (the one duplicate a reset
    /// causes), and later sends go there too. (A send that races the reset may also fail.)
    @Test func aDroppedConnectionLosesTheAnswerAndTheNextSendsReconnect() async throws {
        try await withMock { setup in
            setup.server.update { $0.dropConnectionAfterRequests = 3 }
            let bearer = try setup.generator.token(issuedAt: now)
            var accepted = 0
            for _ in 0..<12 {
                if case .accepted? = try? await setup.client.send(
                    try notification(), deviceToken: randomAPNsToken(), topic: "t", bearer: bearer)
                {
                    accepted += 1
                }
            }
            let statistics = setup.server.statistics
            #expect(statistics.droppedConnections >= 2)
            #expect(accepted >= 2 * statistics.droppedConnections)
            // What the mock accepted: every answered send, and the one request each reset cut off.
            #expect(setup.server.received.count == accepted + statistics.droppedConnections)
            #expect(statistics.answered == accepted)
        }
    }

    @Test func aBatchAnswersEachTokenInOrderEvenBeyondTheFlowControlWindow() async throws {
        try await withMock { setup in
            // 800 error bodies of ~50 bytes (and 1600 answers) exceed HTTP/2's initial 64 KiB connection window:
            // the client must keep granting window for the answers to keep coming.
            let tokens = (0..<1600).map { _ in randomAPNsToken() }
            let gone = Set(tokens.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
            setup.server.update { behavior in
                for token in gone { behavior.unregistered[token] = 1_700_000_000_000 }
            }
            let results = await setup.client.send(
                try notification(), deviceTokens: tokens, topic: "com.example.app", bearer: try setup.generator.token(issuedAt: now))
            #expect(results.count == tokens.count)
            for (token, result) in zip(tokens, results) {
                let outcome = try result.get()
                if gone.contains(token) {
                    #expect(outcome == .rejected(status: 410, reason: .unregistered, timestamp: 1_700_000_000_000))
                } else {
                    guard case .accepted = outcome else {
                        Issue.record("\(token) was not accepted: \(outcome)")
                        return
                    }
                }
            }
            #expect(Set(setup.server.received.map(\.deviceToken)) == Set(tokens).subtracting(gone))
        }
    }

    /// A batch names each notification with its own `apns-id` (the server echoes it, and need not
    /// make one up): distinct version-4 UUIDs in lower case, each answered back for its device.
    @Test func aBatchNamesEachNotificationWithItsOwnID() async throws {
        try await withMock { setup in
            let tokens = (0..<300).map { _ in randomAPNsToken() }
            let results = await setup.client.send(
                try notification(), deviceTokens: tokens, topic: "com.example.app", bearer: try setup.generator.token(issuedAt: now))
            let sent = Dictionary(uniqueKeysWithValues: setup.server.received.map { ($0.deviceToken, $0.headers["apns-id"]) })
            #expect(sent.count == tokens.count)
            for (token, result) in zip(tokens, results) {
                let id = try #require(sent[token] ?? nil, "no apns-id sent to \(token)")
                let uuid = try #require(UUID(text: id))
                #expect(uuid.lowercasedString == id)
                #expect(id[id.index(id.startIndex, offsetBy: 14)] == "4", "version 4: \(id)")
                #expect(try result.get() == .accepted(apnsID: id))
            }
            #expect(Set(sent.values).count == tokens.count)
        }
    }

    @Test func streamsAGoAwayRefusesAreSentAgainOnANewConnection() async throws {
        try await withMock { setup in
            setup.server.update { $0.goAwayAfterStreams = 7 }
            let tokens = (0..<60).map { _ in randomAPNsToken() }
            let results = await setup.client.send(
                try notification(), deviceTokens: tokens, topic: "com.example.app", bearer: try setup.generator.token(issuedAt: now))
            #expect(results.allSatisfy { if case .success(.accepted) = $0 { true } else { false } })
            // Each accepted once: the refused streams were sent again, the answered ones not.
            #expect(setup.server.received.count == tokens.count)
            #expect(Set(setup.server.received.map(\.deviceToken)) == Set(tokens))
            #expect(await goAwaysSent(by: setup.server) >= 1)
        }
    }

    /// The mock's GOAWAYs, waiting up to 5 s for the first: the mock writes one once the read
    /// that reached its limit is dealt with, and on a loaded machine the client may have had every
    /// answer of that read before then.
    func goAwaysSent(by server: MockAPNsServer) async -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        while server.statistics.goAways == 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        return server.statistics.goAways
    }
}
