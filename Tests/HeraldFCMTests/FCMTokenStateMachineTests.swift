import HeraldFCM
import Testing

@Suite struct FCMTokenStateMachineTests {
    let start: Int64 = 1_800_000_000
    let lifetime: Int64 = 3599

    /// Drives the machine like the provider would, fetching with a counter instead of an endpoint.
    func token(_ machine: inout FCMTokenStateMachine, now: Int64, fetched: inout Int) -> FCMTokenStateMachine.Action {
        let action = machine.nextToken(now: now)
        if case .fetch(let issuedAt) = action {
            fetched += 1
            machine.fetched("a\(fetched)", expiresAt: issuedAt + lifetime)
            return .use("a\(fetched)")
        }
        return action
    }

    @Test func reusesATokenUntilFiveMinutesBeforeItExpires() {
        var machine = FCMTokenStateMachine()
        var fetched = 0
        #expect(token(&machine, now: start, fetched: &fetched) == .use("a1"))
        #expect(token(&machine, now: start + 1800, fetched: &fetched) == .use("a1"))
        #expect(token(&machine, now: start + lifetime - 301, fetched: &fetched) == .use("a1"))
        #expect(token(&machine, now: start + lifetime - 300, fetched: &fetched) == .use("a2"))
        // The new token counts from when it was asked for.
        let renewed = start + lifetime - 300
        #expect(token(&machine, now: renewed + lifetime - 301, fetched: &fetched) == .use("a2"))
        #expect(token(&machine, now: renewed + lifetime - 300, fetched: &fetched) == .use("a3"))
        #expect(fetched == 3)
    }

    @Test func oneFetchAtATimeWhileTheOldTokenServesUntilItExpires() {
        var machine = FCMTokenStateMachine()
        #expect(machine.nextToken(now: start) == .fetch(issuedAt: start))
        // Nothing to use yet: everyone else waits for that fetch.
        #expect(machine.nextToken(now: start) == .wait)
        machine.fetched("a1", expiresAt: start + lifetime)

        let renewal = start + lifetime - 200
        #expect(machine.nextToken(now: renewal) == .fetch(issuedAt: renewal))
        // The renewal is in flight: the old token is still good, so it is used, not waited for.
        #expect(machine.nextToken(now: renewal + 10) == .use("a1"))
        // Once it has expired, callers wait.
        #expect(machine.nextToken(now: start + lifetime) == .wait)
        machine.fetched("a2", expiresAt: renewal + lifetime)
        #expect(machine.nextToken(now: start + lifetime) == .use("a2"))
    }

    @Test func aFailedFetchIsTriedAgainByTheNextCaller() {
        var machine = FCMTokenStateMachine()
        #expect(machine.nextToken(now: start) == .fetch(issuedAt: start))
        machine.fetchFailed()
        #expect(machine.nextToken(now: start + 1) == .fetch(issuedAt: start + 1))
        machine.fetched("a1", expiresAt: start + 1 + lifetime)
        // A failed renewal keeps the old token while it lasts.
        let renewal = start + lifetime - 100
        #expect(machine.nextToken(now: renewal) == .fetch(issuedAt: renewal))
        machine.fetchFailed()
        #expect(machine.nextToken(now: renewal + 1) == .fetch(issuedAt: renewal + 1))
        #expect(machine.nextToken(now: renewal + 2) == .use("a1"))
    }

    @Test func a401RefreshesOnceThenTheCredentialsAreFailing() {
        var machine = FCMTokenStateMachine()
        var fetched = 0
        _ = token(&machine, now: start, fetched: &fetched)
        #expect(machine.rejected("a1") == .retryWithNewToken)
        // Other requests that were in flight with a1 come back 401 too: still one refresh.
        #expect(machine.rejected("a1") == .retryWithNewToken)
        #expect(token(&machine, now: start + 60, fetched: &fetched) == .use("a2"))
        #expect(machine.rejected("a1") == .retryWithNewToken)
        // The fresh token is refused as well.
        #expect(machine.rejected("a2") == .markFailing)
        #expect(machine.nextToken(now: start + 120) == .fail)
        #expect(machine.nextToken(now: start + 99_999) == .fail)
        #expect(fetched == 2)
    }

    @Test func aFreshTokenThatFCMAcceptedEarnsAnotherRefresh() {
        var machine = FCMTokenStateMachine()
        var fetched = 0
        _ = token(&machine, now: start, fetched: &fetched)
        #expect(machine.rejected("a1") == .retryWithNewToken)
        _ = token(&machine, now: start + 60, fetched: &fetched)
        machine.accepted("a2")
        #expect(machine.rejected("a2") == .retryWithNewToken)
        #expect(token(&machine, now: start + 120, fetched: &fetched) == .use("a3"))
        #expect(machine.rejected("a3") == .markFailing)
    }

    @Test func a401DuringARenewalDropsTheOldToken() {
        var machine = FCMTokenStateMachine()
        #expect(machine.nextToken(now: start) == .fetch(issuedAt: start))
        machine.fetched("a1", expiresAt: start + lifetime)
        let renewal = start + lifetime - 100
        #expect(machine.nextToken(now: renewal) == .fetch(issuedAt: renewal))
        #expect(machine.rejected("a1") == .retryWithNewToken)
        #expect(machine.nextToken(now: renewal + 1) == .wait)
        machine.fetched("a2", expiresAt: renewal + lifetime)
        // That renewal is the one refresh: a refusal of a2 means failing.
        #expect(machine.rejected("a2") == .markFailing)
    }

    @Test func aRefusedServiceAccountIsFailing() {
        var machine = FCMTokenStateMachine()
        #expect(machine.nextToken(now: start) == .fetch(issuedAt: start))
        machine.fetchRefused()
        #expect(machine.nextToken(now: start + 3600) == .fail)
        #expect(machine.rejected("a1") == .markFailing)
    }
}
