import Foundation
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldFCM

/// A token endpoint in memory: counts assertions, answers `a1`, `a2`, … or what it is told to throw.
final class FakeTokenEndpoint: Sendable {
    private struct State {
        var assertions: [String] = []
        var failures: [FCMTokenError] = []
        var gate: Gate?
    }

    private let state = Mutex(State())
    let started: AsyncStream<Int>
    private let startedContinuation: AsyncStream<Int>.Continuation

    init() {
        (started, startedContinuation) = AsyncStream.makeStream(of: Int.self)
    }

    var assertions: [String] { state.withLock { $0.assertions } }

    /// The next exchanges throw these, in order.
    func fail(with errors: FCMTokenError...) {
        state.withLock { $0.failures += errors }
    }

    /// The next exchanges wait for this gate.
    func hold(_ gate: Gate?) {
        state.withLock { $0.gate = gate }
    }

    func exchange(_ assertion: String) async throws -> FCMAccessTokenProvider.Grant {
        let (count, failure, gate) = state.withLock { state -> (Int, FCMTokenError?, Gate?) in
            state.assertions.append(assertion)
            let failure = state.failures.isEmpty ? nil : state.failures.removeFirst()
            return (state.assertions.count, failure, state.gate)
        }
        startedContinuation.yield(count)
        await Task.yield()
        if let gate { await gate.wait() }
        if let failure { throw failure }
        return FCMAccessTokenProvider.Grant(accessToken: "a\(count)", lifetime: .seconds(3599))
    }

    /// The `iat` of an assertion.
    static func issuedAt(_ assertion: String) throws -> Int64? {
        let claims = try #require(Base64URL.decode(String(assertion.split(separator: ".")[1])))
        guard case .int(let iat)? = try JSONDecoder().decode(JSONValue.self, from: Data(claims)).objectValue?["iat"] else { return nil }
        return iat
    }
}
