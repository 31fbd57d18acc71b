import HeraldCore
import HeraldHTTP
import HeraldTestSupport
import Synchronization

/// The source of `TestTokenError`s.
enum TestTokenSource: AccessTokenSource {
    static let provider = "Test"
    static let credentials = "the test credentials"
}

typealias TestTokenError = AccessTokenError<TestTokenSource>
typealias TestTokenProvider = AccessTokenProvider<TestTokenSource>

/// A token endpoint in memory: counts requests, answers `t1`, `t2`, … or what it is told to throw.
final class FakeTokenEndpoint: Sendable {
    private struct State {
        var requests: [EpochClock.Instant] = []
        var failures: [TestTokenError] = []
        var gate: Gate?
    }

    private let state = Mutex(State())
    let started: AsyncStream<Int>
    private let startedContinuation: AsyncStream<Int>.Continuation
    let lifetime: Duration

    init(lifetime: Duration = .seconds(86_400)) {
        self.lifetime = lifetime
        (started, startedContinuation) = AsyncStream.makeStream(of: Int.self)
    }

    var requests: Int { state.withLock { $0.requests.count } }
    /// When each request's assertion (had there been one) was issued.
    var issuedAt: [EpochClock.Instant] { state.withLock { $0.requests } }

    /// The next requests throw these, in order.
    func fail(with errors: TestTokenError...) {
        state.withLock { $0.failures += errors }
    }

    /// The next requests wait for this gate.
    func hold(_ gate: Gate?) {
        state.withLock { $0.gate = gate }
    }

    func exchange(issuedAt: EpochClock.Instant) async throws -> TestTokenProvider.Grant {
        let (count, failure, gate) = state.withLock { state -> (Int, TestTokenError?, Gate?) in
            state.requests.append(issuedAt)
            let failure = state.failures.isEmpty ? nil : state.failures.removeFirst()
            return (state.requests.count, failure, state.gate)
        }
        startedContinuation.yield(count)
        if let gate { await gate.wait() }
        if let failure { throw failure }
        return TestTokenProvider.Grant(accessToken: "t\(count)", lifetime: lifetime)
    }

    /// A provider that asks this endpoint.
    func provider(clock: TestClock) -> TestTokenProvider {
        TestTokenProvider(clock: clock.epochClock) { try await self.exchange(issuedAt: $0) }
    }
}
