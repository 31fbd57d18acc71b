import HeraldWNS
import Testing

@Suite struct WNSTokenStateMachineTests {
    let start: Int64 = 1_800_000_000
    let day: Int64 = 86_400

    /// Drives the machine as the provider does, with a counter for a token endpoint.
    func token(_ machine: inout WNSTokenStateMachine, now: Int64, lifetime: Int64 = 86_400, fetched: inout Int)
        -> WNSTokenStateMachine.Action
    {
        let action = machine.nextToken(now: now)
        guard action == .fetch else { return action }
        fetched += 1
        machine.fetched("t\(fetched)", expiresIn: lifetime)
        return .use("t\(fetched)")
    }

    @Test func reusesATokenUntilFiveMinutesBeforeItExpires() {
        var machine = WNSTokenStateMachine()
        var fetched = 0
        #expect(token(&machine, now: start, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + 3600, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + day - 301, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + day - 300, fetched: &fetched) == .use("t2"))
        // The new token's lifetime counts from when it was asked for.
        let renewed = start + day - 300
        #expect(token(&machine, now: renewed + day - 301, fetched: &fetched) == .use("t2"))
        #expect(token(&machine, now: renewed + day - 300, fetched: &fetched) == .use("t3"))
        #expect(fetched == 3)
    }

    @Test func aShortLivedTokenIsRenewedHalfwayThrough() {
        var machine = WNSTokenStateMachine()
        var fetched = 0
        #expect(token(&machine, now: start, lifetime: 120, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + 59, lifetime: 120, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + 60, lifetime: 120, fetched: &fetched) == .use("t2"))
        #expect(fetched == 2)
    }

    @Test func oneFetchAtATimeWhileTheOldTokenServesUntilItExpires() {
        var machine = WNSTokenStateMachine()
        #expect(machine.nextToken(now: start) == .fetch)
        // Nothing to use yet: everyone else waits for that fetch.
        #expect(machine.nextToken(now: start) == .wait)
        #expect(machine.nextToken(now: start + 5) == .wait)
        machine.fetched("t1", expiresIn: day)
        #expect(machine.nextToken(now: start + 5) == .use("t1"))

        let renewal = start + day - 200
        #expect(machine.nextToken(now: renewal) == .fetch)
        // The renewal is in flight: the old token is still good, so it is used, not waited for.
        #expect(machine.nextToken(now: renewal + 10) == .use("t1"))
        // Once it has expired, callers wait.
        #expect(machine.nextToken(now: start + day) == .wait)
        machine.fetched("t2", expiresIn: day)
        #expect(machine.nextToken(now: start + day) == .use("t2"))
        // t2 counts from the renewal's start, not from when it came.
        #expect(machine.nextToken(now: renewal + day - 301) == .use("t2"))
        #expect(machine.nextToken(now: renewal + day - 300) == .fetch)
    }

    @Test func aFailedFetchIsTriedAgainByTheNextCaller() {
        var machine = WNSTokenStateMachine()
        #expect(machine.nextToken(now: start) == .fetch)
        machine.fetchFailed()
        #expect(machine.nextToken(now: start + 1) == .fetch)
        machine.fetched("t1", expiresIn: day)
        // A failed renewal keeps the old token while it lasts; the next caller asks again.
        let renewal = start + day - 100
        #expect(machine.nextToken(now: renewal) == .fetch)
        machine.fetchFailed()
        #expect(machine.nextToken(now: renewal + 1) == .fetch)
        #expect(machine.nextToken(now: renewal + 2) == .use("t1"))
        machine.fetchFailed()
        // Expired with no renewal: nothing to use.
        #expect(machine.nextToken(now: start + 1 + day) == .fetch)
        #expect(machine.nextToken(now: start + 1 + day) == .wait)
    }

    @Test func a401RefreshesOnceThenTheCredentialsAreFailing() {
        var machine = WNSTokenStateMachine()
        var fetched = 0
        _ = token(&machine, now: start, fetched: &fetched)
        #expect(machine.rejected("t1") == .retryWithNewToken)
        // Other notifications in flight with t1 come back 401 too: still one refresh.
        #expect(machine.rejected("t1") == .retryWithNewToken)
        #expect(token(&machine, now: start + 60, fetched: &fetched) == .use("t2"))
        #expect(machine.rejected("t1") == .retryWithNewToken)
        // The fresh token is refused as well.
        #expect(machine.rejected("t2") == .markFailing)
        #expect(machine.nextToken(now: start + 120) == .fail)
        #expect(machine.nextToken(now: start + 10 * day) == .fail)
        #expect(fetched == 2)
    }

    @Test func aFreshTokenThatWNSAcceptedEarnsAnotherRefresh() {
        var machine = WNSTokenStateMachine()
        var fetched = 0
        _ = token(&machine, now: start, fetched: &fetched)
        #expect(machine.rejected("t1") == .retryWithNewToken)
        _ = token(&machine, now: start + 1, fetched: &fetched)
        machine.accepted("t2")
        // Revoked again later: that is a new refusal, worth one more refresh.
        #expect(machine.rejected("t2") == .retryWithNewToken)
        #expect(token(&machine, now: start + 2, fetched: &fetched) == .use("t3"))
        #expect(machine.rejected("t3") == .markFailing)
    }

    @Test func a401DuringARenewalDropsTheOldTokenAndWaitsForTheNewOne() {
        var machine = WNSTokenStateMachine()
        var fetched = 0
        _ = token(&machine, now: start, fetched: &fetched)
        let renewal = start + day - 100
        #expect(machine.nextToken(now: renewal) == .fetch)
        #expect(machine.rejected("t1") == .retryWithNewToken)
        #expect(machine.nextToken(now: renewal + 1) == .wait)
        machine.fetched("t2", expiresIn: day)
        // t2 came after a refusal: if WNS refuses it too, the credentials are failing.
        #expect(machine.rejected("t2") == .markFailing)
    }

    @Test func aRefusedClientStopsAllFetching() {
        var machine = WNSTokenStateMachine()
        #expect(machine.nextToken(now: start) == .fetch)
        machine.fetchRefused()
        #expect(machine.nextToken(now: start + 1) == .fail)
        // Late reports change nothing.
        machine.fetched("t1", expiresIn: day)
        machine.fetchFailed()
        machine.accepted("t1")
        #expect(machine.nextToken(now: start + 2) == .fail)
        #expect(machine.rejected("t1") == .markFailing)
    }
}
