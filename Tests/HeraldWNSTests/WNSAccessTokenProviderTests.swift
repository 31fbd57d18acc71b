import HeraldCore
import Synchronization
import HeraldHTTP
import Testing
import HeraldTestSupport

@testable import HeraldWNS

/// A token endpoint in memory: counts requests, answers `t1`, `t2`, … or what it is told to throw.
final class FakeTokenEndpoint: Sendable {
    private struct State {
        var requests = 0
        var failures: [WNSTokenError] = []
        var gate: Gate?
    }

    private let state = Mutex(State())
    let started: AsyncStream<Int>
    private let startedContinuation: AsyncStream<Int>.Continuation
    let lifetime: Int64

    init(lifetime: Int64 = 86_400) {
        self.lifetime = lifetime
        (started, startedContinuation) = AsyncStream.makeStream(of: Int.self)
    }

    var requests: Int { state.withLock { $0.requests } }

    /// The next requests throw these, in order.
    func fail(with errors: WNSTokenError...) {
        state.withLock { $0.failures += errors }
    }

    /// The next requests wait for this gate.
    func hold(_ gate: Gate?) {
        state.withLock { $0.gate = gate }
    }

    func exchange() async throws -> WNSAccessTokenProvider.Grant {
        let (count, failure, gate) = state.withLock { state -> (Int, WNSTokenError?, Gate?) in
            state.requests += 1
            let failure = state.failures.isEmpty ? nil : state.failures.removeFirst()
            return (state.requests, failure, state.gate)
        }
        startedContinuation.yield(count)
        if let gate { await gate.wait() }
        if let failure { throw failure }
        return WNSAccessTokenProvider.Grant(accessToken: "t\(count)", expiresIn: lifetime)
    }
}

@Suite struct WNSAccessTokenProviderTests {
    func provider(_ endpoint: FakeTokenEndpoint, clock: ManualClock) -> WNSAccessTokenProvider {
        WNSAccessTokenProvider(now: clock.function) { try await endpoint.exchange() }
    }

    @Test func concurrentCallersShareOneRequest() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = provider(endpoint, clock: ManualClock())
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
        let tokens = provider(endpoint, clock: ManualClock())
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

    @Test func renewsFiveMinutesBeforeExpiryWhileTheOldTokenKeepsServing() async throws {
        let endpoint = FakeTokenEndpoint()
        let clock = ManualClock()
        let tokens = provider(endpoint, clock: clock)
        #expect(try await tokens.token() == "t1")
        clock.advance(by: 86_400 - 301)
        #expect(try await tokens.token() == "t1")
        #expect(endpoint.requests == 1)

        // At five minutes before expiry one caller starts the renewal; held at the endpoint, it
        // keeps the others on the old token rather than waiting or starting their own.
        clock.advance(by: 1)
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
    }

    @Test func aTransientFailureIsThrownAndTriedAgainNextTime() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = provider(endpoint, clock: ManualClock())
        let unavailable = WNSTokenError(reason: .unavailable, status: 503, message: "down", retryAfter: 10)
        endpoint.fail(with: unavailable)
        await #expect(throws: unavailable) { try await tokens.token() }
        #expect(try await tokens.token() == "t2")
    }

    @Test func aRefusedClientStaysRefusedWithoutAskingAgain() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = provider(endpoint, clock: ManualClock())
        let refused = WNSTokenError(reason: .refused("invalid_client"), status: 400, message: "the client secret is wrong")
        endpoint.fail(with: refused)
        await #expect(throws: refused) { try await tokens.token() }
        await #expect(throws: refused) { try await tokens.token() }
        #expect(endpoint.requests == 1)
    }

    @Test func a401FetchesOneFreshTokenThenGivesUp() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = provider(endpoint, clock: ManualClock())
        #expect(try await tokens.token() == "t1")
        #expect(await tokens.rejected("t1", status: 401, message: "revoked") == .retryWithNewToken)
        #expect(try await tokens.token() == "t2")
        #expect(await tokens.rejected("t2", status: 401, message: "revoked again") == .markFailing)
        let error = await #expect(throws: WNSTokenError.self) { try await tokens.token() }
        #expect(error?.reason == .failing)
        #expect(error?.meansCredentialsRejected == true)
        #expect(error?.message.contains("revoked again") == true)
        #expect(endpoint.requests == 2)
    }

    @Test func theRequestIsTheClientCredentialsForm() {
        let form = OAuthTokenEndpoint.body(WNSAccessTokenProvider.form(WNSCredentials(clientID: "ms-app://s-1-15-2-1", clientSecret: "a+b/c=d&e")))
        #expect(form == "grant_type=client_credentials&client_id=ms-app%3A%2F%2Fs-1-15-2-1&client_secret=a%2Bb%2Fc%3Dd%26e&scope=notify.windows.com")
        #expect(OAuthTokenEndpoint.formEncoded("a.b_c-d~e f/é") == "a.b_c-d~e%20f%2F%C3%A9")
    }
}
