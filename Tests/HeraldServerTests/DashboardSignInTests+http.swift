import HeraldCore
import HeraldTestSupport
import HummingbirdTesting
import Testing

@testable import HeraldServer

extension DashboardSignInTests {
    /// Behind a reverse proxy every operator has the proxy's address: a guesser's wrong tokens
    /// are answered 429, and an operator with the right token still signs in.
    @Test func aRightTokenSignsInWhileWrongOnesAreThrottled() async throws {
        try await ServerHarness.run(.sqlite) { harness, client in
            for attempt in 1...5 {
                let wrong = try await client.execute(
                    uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders,
                    body: Dashboard.form(["token": "guess-\(attempt)"]))
                #expect(wrong.status == .unauthorized)
            }
            let limited = try await client.execute(
                uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders, body: Dashboard.form(["token": "guess-6"]))
            #expect(limited.status == .tooManyRequests)
            let right = try await client.execute(
                uri: "/dashboard/signin", method: .post, headers: Dashboard.formHeaders, body: Dashboard.form(["token": harness.adminToken])
            )
            #expect(right.status == .seeOther, "a right token is never refused")
            #expect(Dashboard.session(from: right) != nil)
        }
    }
}
