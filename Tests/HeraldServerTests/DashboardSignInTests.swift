import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldServer

/// The dashboard's sessions and sign-in throttle on their own, on a hand-moved clock: one token
/// signing in again and again cannot push another token's session out, and wrong tokens are
/// slowed (per client, globally, with backoff) without a right token ever being refused.
@Suite struct DashboardSignInTests {
    @Test func oneTokenSigningInOverAndOverKeepsAnotherTokensSession() {
        let clock = TestClock()
        let sessions = DashboardSessions(clock: clock.epochClock)
        let root = sessions.open(token: "root-token").id
        clock.advance(1)
        let first = sessions.open(token: "tenant-token").id
        var last = first
        for _ in 0..<10_050 {
            clock.advance(1)
            last = sessions.open(token: "tenant-token").id
        }
        #expect(sessions.find(root)?.token == "root-token", "the root operator is still signed in")
        #expect(sessions.find(last)?.token == "tenant-token")
        #expect(sessions.find(first) == nil, "the busy token's oldest session made room for its newest")
    }
}

extension DashboardSignInTests {
    @Test func manyTokensShareTheTableWithoutPushingOutAnyTokensLastSession() {
        let clock = TestClock()
        let sessions = DashboardSessions(capacity: 50, perToken: 5, clock: clock.epochClock)
        let root = sessions.open(token: "root").id
        var latest: [String: String] = [:]
        for round in 0..<5 {
            for token in 0..<20 {
                clock.advance(1)
                latest["t\(token)"] = sessions.open(token: "t\(token)").id
                _ = round
            }
        }
        #expect(sessions.count <= 50)
        #expect(sessions.find(root) != nil, "the token with one session keeps it")
        for (token, id) in latest { #expect(sessions.find(id)?.token == token) }
    }

    @Test func wrongTokensAreCountedPerClientWithBackoff() {
        let clock = TestClock()
        let throttle = SignInThrottle(
            attempts: 5, globalAttempts: 1000, window: .seconds(60), maximumBlock: .seconds(600), clock: clock.epochClock)
        for _ in 1...5 { #expect(throttle.failed("a") == .allow) }
        #expect(throttle.failed("a") == .refuse(retryAfter: .seconds(60)))
        // Another client is not slowed by a's guesses.
        #expect(throttle.failed("b") == .allow)
        // After the block, five more, and the block doubles, up to its maximum.
        var waits: [Duration] = [.seconds(60)]
        for _ in 0..<6 {
            clock.advance(by: waits.last!)
            for _ in 1...5 { #expect(throttle.failed("a") == .allow) }
            guard case .refuse(let wait) = throttle.failed("a") else {
                Issue.record("a is refused after its fifth wrong token")
                return
            }
            waits.append(wait)
        }
        #expect(waits == [60, 120, 240, 480, 600, 600, 600].map { .seconds($0) })
    }

    @Test func wrongTokensFromEveryoneTogetherAreCountedToo() {
        let clock = TestClock()
        let throttle = SignInThrottle(attempts: 5, globalAttempts: 12, window: .seconds(60), clock: clock.epochClock)
        for client in 0..<12 { #expect(throttle.failed("client \(client)") == .allow) }
        #expect(throttle.failed("another") == .refuse(retryAfter: .seconds(60)))
        clock.advance(by: .seconds(60))
        #expect(throttle.failed("another") == .allow)
    }
}
