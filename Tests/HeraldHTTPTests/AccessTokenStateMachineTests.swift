import HeraldCore
import HeraldHTTP
import Testing

/// The one access-token machine FCM and WNS share: Google's tokens live 3599 s, Microsoft's a
/// day; the rules are the same for both.
@Suite struct AccessTokenStateMachineTests {
    typealias Machine = AccessTokenStateMachine<EpochClock.Instant>
    let start: Int64 = 1_800_000_000
    let day: Int64 = 86_400

    func at(_ seconds: Int64) -> EpochClock.Instant { EpochClock.Instant(sinceEpoch: .seconds(seconds)) }

    /// Drives the machine as the provider does, with a counter for a token endpoint.
    func token(_ machine: inout Machine, now: Int64, lifetime: Int64, fetched: inout Int) -> Machine.Action {
        let action = machine.nextToken(now: at(now))
        guard case .fetch = action else { return action }
        fetched += 1
        machine.fetched("t\(fetched)", lifetime: .seconds(lifetime))
        return .use("t\(fetched)")
    }

    @Test(arguments: [3599, 86_400] as [Int64])
    func reusesATokenUntilFiveMinutesBeforeItExpires(lifetime: Int64) {
        var machine = Machine()
        var fetched = 0
        #expect(token(&machine, now: start, lifetime: lifetime, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + 1800, lifetime: lifetime, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + lifetime - 301, lifetime: lifetime, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + lifetime - 300, lifetime: lifetime, fetched: &fetched) == .use("t2"))
        // The new token's lifetime counts from when it was asked for.
        let renewed = start + lifetime - 300
        #expect(token(&machine, now: renewed + lifetime - 301, lifetime: lifetime, fetched: &fetched) == .use("t2"))
        #expect(token(&machine, now: renewed + lifetime - 300, lifetime: lifetime, fetched: &fetched) == .use("t3"))
        #expect(fetched == 3)
    }

    @Test func aShortLivedTokenIsRenewedHalfwayThrough() {
        var machine = Machine()
        var fetched = 0
        #expect(token(&machine, now: start, lifetime: 120, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + 59, lifetime: 120, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + 60, lifetime: 120, fetched: &fetched) == .use("t2"))
        #expect(fetched == 2)
    }

    @Test func theRenewalRuleIsConfiguration() {
        var machine = Machine(renewal: AccessTokenRenewal(renewBefore: .seconds(600)))
        var fetched = 0
        #expect(token(&machine, now: start, lifetime: 3600, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + 2999, lifetime: 3600, fetched: &fetched) == .use("t1"))
        #expect(token(&machine, now: start + 3000, lifetime: 3600, fetched: &fetched) == .use("t2"))
    }

    @Test func oneFetchAtATimeWhileTheOldTokenServesUntilItExpires() {
        var machine = Machine()
        #expect(machine.nextToken(now: at(start)) == .fetch(at: at(start)))
        // Nothing to use yet: everyone else waits for that fetch.
        #expect(machine.nextToken(now: at(start)) == .wait)
        #expect(machine.nextToken(now: at(start + 5)) == .wait)
        machine.fetched("t1", lifetime: .seconds(day))
        #expect(machine.nextToken(now: at(start + 5)) == .use("t1"))

        let renewal = start + day - 200
        #expect(machine.nextToken(now: at(renewal)) == .fetch(at: at(renewal)))
        // The renewal is in flight: the old token is still good, so it is used, not waited for.
        #expect(machine.nextToken(now: at(renewal + 10)) == .use("t1"))
        // Once it has expired, callers wait.
        #expect(machine.nextToken(now: at(start + day)) == .wait)
        machine.fetched("t2", lifetime: .seconds(day))
        #expect(machine.nextToken(now: at(start + day)) == .use("t2"))
        // t2 counts from the renewal's start, not from when it came.
        #expect(machine.nextToken(now: at(renewal + day - 301)) == .use("t2"))
        #expect(machine.nextToken(now: at(renewal + day - 300)) == .fetch(at: at(renewal + day - 300)))
    }

    @Test func aFailedFetchIsTriedAgainByTheNextCaller() {
        var machine = Machine()
        #expect(machine.nextToken(now: at(start)) == .fetch(at: at(start)))
        machine.fetchFailed()
        #expect(machine.nextToken(now: at(start + 1)) == .fetch(at: at(start + 1)))
        machine.fetched("t1", lifetime: .seconds(day))
        // A failed renewal keeps the old token while it lasts; the next caller asks again.
        let renewal = start + day - 100
        #expect(machine.nextToken(now: at(renewal)) == .fetch(at: at(renewal)))
        machine.fetchFailed()
        #expect(machine.nextToken(now: at(renewal + 1)) == .fetch(at: at(renewal + 1)))
        #expect(machine.nextToken(now: at(renewal + 2)) == .use("t1"))
        machine.fetchFailed()
        // Expired with no renewal: nothing to use.
        #expect(machine.nextToken(now: at(start + 1 + day)) == .fetch(at: at(start + 1 + day)))
        #expect(machine.nextToken(now: at(start + 1 + day)) == .wait)
    }

    @Test func a401RefreshesOnceThenTheCredentialsAreFailing() {
        var machine = Machine()
        var fetched = 0
        _ = token(&machine, now: start, lifetime: day, fetched: &fetched)
        #expect(machine.rejected("t1") == .retryWithNewToken)
        // Other requests in flight with t1 come back 401 too: still one refresh.
        #expect(machine.rejected("t1") == .retryWithNewToken)
        #expect(token(&machine, now: start + 60, lifetime: day, fetched: &fetched) == .use("t2"))
        #expect(machine.rejected("t1") == .retryWithNewToken)
        // The fresh token is refused as well.
        #expect(machine.rejected("t2") == .markFailing)
        #expect(machine.nextToken(now: at(start + 120)) == .fail)
        #expect(machine.nextToken(now: at(start + 10 * day)) == .fail)
        #expect(fetched == 2)
    }

    @Test func aFreshTokenTheProviderAcceptedEarnsAnotherRefresh() {
        var machine = Machine()
        var fetched = 0
        _ = token(&machine, now: start, lifetime: day, fetched: &fetched)
        #expect(machine.rejected("t1") == .retryWithNewToken)
        _ = token(&machine, now: start + 1, lifetime: day, fetched: &fetched)
        machine.accepted("t2")
        // Revoked again later: that is a new refusal, worth one more refresh.
        #expect(machine.rejected("t2") == .retryWithNewToken)
        #expect(token(&machine, now: start + 2, lifetime: day, fetched: &fetched) == .use("t3"))
        #expect(machine.rejected("t3") == .markFailing)
    }

    @Test func a401DuringARenewalDropsTheOldTokenAndWaitsForTheNewOne() {
        var machine = Machine()
        var fetched = 0
        _ = token(&machine, now: start, lifetime: day, fetched: &fetched)
        let renewal = start + day - 100
        #expect(machine.nextToken(now: at(renewal)) == .fetch(at: at(renewal)))
        #expect(machine.rejected("t1") == .retryWithNewToken)
        #expect(machine.nextToken(now: at(renewal + 1)) == .wait)
        machine.fetched("t2", lifetime: .seconds(day))
        // t2 came after a refusal: if the provider refuses it too, the credentials are failing.
        #expect(machine.rejected("t2") == .markFailing)
    }

    @Test func refusedCredentialsStopAllFetching() {
        var machine = Machine()
        #expect(machine.nextToken(now: at(start)) == .fetch(at: at(start)))
        machine.fetchRefused()
        #expect(machine.nextToken(now: at(start + 1)) == .fail)
        #expect(machine.nextToken(now: at(start + 3600)) == .fail)
        // Late reports change nothing.
        machine.fetched("t1", lifetime: .seconds(day))
        machine.fetchFailed()
        machine.accepted("t1")
        #expect(machine.nextToken(now: at(start + 2)) == .fail)
        #expect(machine.rejected("t1") == .markFailing)
    }
}
