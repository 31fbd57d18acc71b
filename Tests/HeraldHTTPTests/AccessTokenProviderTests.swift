import HeraldCore
import HeraldHTTP
import HeraldTestSupport
import Synchronization
import Testing

/// The one access-token provider FCM and WNS share, with a token endpoint in memory.
@Suite struct AccessTokenProviderTests {
    @Test func concurrentCallersShareOneRequest() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = endpoint.provider(clock: TestClock())
        let got = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await tokens.token() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(got == Array(repeating: "t1", count: 50))
        #expect(endpoint.requests == 1)
        #expect(await tokens.exchanges == 1)
    }

    @Test func callersArrivingDuringTheFirstRequestWaitForIt() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = endpoint.provider(clock: TestClock())
        let gate = Gate()
        endpoint.hold(gate)
        var started = endpoint.started.makeAsyncIterator()
        let first = Task { try await tokens.token() }
        #expect(await started.next() == 1)
        let others = (0..<10).map { _ in Task { try await tokens.token() } }
        gate.open()
        #expect(try await first.value == "t1")
        for other in others { #expect(try await other.value == "t1") }
        #expect(endpoint.requests == 1)
    }

    @Test(arguments: [3599, 86_400] as [Int64])
    func renewsFiveMinutesBeforeExpiryWhileTheOldTokenKeepsServing(lifetime: Int64) async throws {
        let endpoint = FakeTokenEndpoint(lifetime: .seconds(lifetime))
        let clock = TestClock()
        let start = clock.epochSeconds
        let tokens = endpoint.provider(clock: clock)
        #expect(try await tokens.token() == "t1")
        clock.advance(by: .seconds(lifetime - 301))
        #expect(try await tokens.token() == "t1")
        #expect(endpoint.requests == 1)

        // At five minutes before expiry one caller starts the renewal; held at the endpoint, it
        // keeps the others on the old token rather than waiting or starting their own.
        clock.advance(by: .seconds(1))
        let gate = Gate()
        endpoint.hold(gate)
        var started = endpoint.started.makeAsyncIterator()
        #expect(await started.next() == 1)
        let renewing = Task { try await tokens.token() }
        #expect(await started.next() == 2)
        #expect(try await tokens.token() == "t1")
        #expect(try await tokens.token() == "t1")
        gate.open()
        #expect(try await renewing.value == "t2")
        #expect(try await tokens.token() == "t2")
        #expect(endpoint.requests == 2)
        // Each request is made at the clock's time (an assertion's `iat`).
        #expect(endpoint.issuedAt.map(\.epochSeconds) == [start, start + lifetime - 300])
    }

    @Test func aTransientFailureIsThrownAndTriedAgainNextTime() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = endpoint.provider(clock: TestClock())
        let unavailable = TestTokenError(reason: .unavailable, status: 503, message: "down", retryAfter: .seconds(10))
        endpoint.fail(with: unavailable)
        await #expect(throws: unavailable) { try await tokens.token() }
        #expect(try await tokens.token() == "t2")
    }

    @Test func refusedCredentialsStayRefusedWithoutAskingAgain() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = endpoint.provider(clock: TestClock())
        let refused = TestTokenError(reason: .refused("invalid_client"), status: 400, message: "the client secret is wrong")
        endpoint.fail(with: refused)
        await #expect(throws: refused) { try await tokens.token() }
        await #expect(throws: refused) { try await tokens.token() }
        #expect(endpoint.requests == 1)
    }

    @Test func a401FetchesOneFreshTokenThenGivesUp() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = endpoint.provider(clock: TestClock())
        #expect(try await tokens.token() == "t1")
        #expect(await tokens.rejected("t1", status: 401, message: "revoked") == .retryWithNewToken)
        #expect(try await tokens.token() == "t2")
        #expect(await tokens.rejected("t2", status: 401, message: "revoked again") == .markFailing)
        let error = await #expect(throws: TestTokenError.self) { try await tokens.token() }
        #expect(error?.reason == .failing)
        #expect(error?.meansCredentialsRejected == true)
        #expect(error?.message.contains("revoked again") == true)
        #expect(endpoint.requests == 2)
    }

    // MARK: The refresh path

    /// A provider in memory that answers 401 to the bearer tokens in `refusing`.
    final class Provider: Sendable {
        let refusing: Mutex<Set<String>>
        let sent = Mutex<[(indices: [Int], bearer: String)]>([])

        init(refusing: Set<String>) { self.refusing = Mutex(refusing) }

        func answer(_ indices: [Int], _ bearer: String) -> [AuthorizedAnswer<String>] {
            sent.withLock { $0.append((indices, bearer)) }
            let refused = refusing.withLock { $0.contains(bearer) }
            return indices.map { index in
                if index == 2 { return .unanswered("\(index): no answer") }
                return refused
                    ? .refused(status: 401, message: "revoked", ifFailing: "\(index): rejected")
                    : .answered("\(index): sent with \(bearer)")
            }
        }
    }

    func send(_ tokens: TestTokenProvider, to provider: Provider, count: Int) async -> [String] {
        let noToken: (any Error) -> String = { "no token: \($0)" }
        return await tokens.send(count: count, noToken: noToken, gaveUp: "gave up") { indices, bearer in
            provider.answer(indices, bearer)
        }
    }

    @Test func refusedRequestsAreSentOnceMoreWithAFreshToken() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = endpoint.provider(clock: TestClock())
        let provider = Provider(refusing: ["t1"])
        let outcomes = await send(tokens, to: provider, count: 4)
        #expect(outcomes == ["0: sent with t2", "1: sent with t2", "2: no answer", "3: sent with t2"])
        #expect(provider.sent.withLock { $0.map(\.indices) } == [[0, 1, 2, 3], [0, 1, 3]])
        // t2 was accepted: the next refusal earns another refresh.
        provider.refusing.withLock { $0 = ["t2"] }
        #expect(await send(tokens, to: provider, count: 1) == ["0: sent with t3"])
        #expect(endpoint.requests == 3)
    }

    @Test func aFreshTokenRefusedTooFailsTheRequestsAndTheCredentials() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = endpoint.provider(clock: TestClock())
        let provider = Provider(refusing: ["t1", "t2"])
        #expect(await send(tokens, to: provider, count: 2) == ["0: rejected", "1: rejected"])
        #expect(endpoint.requests == 2)
        let later = await send(tokens, to: provider, count: 1)
        #expect(later.count == 1 && later[0].hasPrefix("no token: the Test credentials are failing"))
        #expect(endpoint.requests == 2)
    }

    @Test func noTokenMeansNoSend() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = endpoint.provider(clock: TestClock())
        endpoint.fail(with: TestTokenError(reason: .unavailable, status: 503, message: "down"))
        let provider = Provider(refusing: [])
        #expect(
            await send(tokens, to: provider, count: 2) == [
                "no token: no Test access token: HTTP 503: down", "no token: no Test access token: HTTP 503: down",
            ])
        #expect(provider.sent.withLock { $0.isEmpty })
    }
}
