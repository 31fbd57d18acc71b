import HeraldCore
import HeraldStore
import Testing

@testable import HeraldDelivery

/// The providers' answers folded into a batch's result, each round with the instant it arrived.
@Suite struct BatchFoldTests {
    typealias F = PlanFixture

    static func fold(attempt: Int = 0, rules: DeliveryRules = DeliveryRules(), retryDelay: Duration = .seconds(1)) -> BatchFold {
        BatchFold(attempt: attempt, pushCreatedAt: F.start, rules: rules, retryDelay: retryDelay)
    }

    /// Issue 31, defect 1: a provider's wait (`Retry-After: 4`) runs from when its refusal
    /// arrived, not from when the batch started. The batch started at `start`; the refusal came
    /// 3 s later; the old dispatcher set `retryAt = start + max(backoff, 4 s)`, 1 s after the
    /// refusal plus a second: before the provider's wait was over.
    @Test func aRetryWaitsTheProvidersWaitFromItsOwnRefusal() {
        var fold = Self.fold()
        let refused = F.start.advanced(by: .seconds(3))
        let devices = [F.target(1, .android), F.target(2, .android)]
        _ = fold.answered(
            devices, [.retry(reason: "QUOTA_EXCEEDED", after: .seconds(4)), .delivered], round: 0, stopping: false, at: refused)
        let result = fold.take()
        let due = try! #require(result.retries.first)
        #expect(due.value == [1])
        #expect(due.key >= refused.advanced(by: .seconds(4)).epochMilliseconds)
        #expect(due.key > F.start.advanced(by: .seconds(4)).epochMilliseconds)
        #expect(result.delivered == 1)
    }

    /// Issue 31, defect 2: after a platform's credentials are refused, the batch's later rounds
    /// for it are held, not sent: a final refusal holds them as a paused platform's, a first
    /// refusal of an APNs token for the backoff; other platforms' rounds go on.
    @Test func roundsAfterARefusalAreHeldForThatPlatformOnly() {
        let now = F.start.advanced(by: .seconds(2))
        var fold = Self.fold(retryDelay: .seconds(3))
        let paused = F.ios
        let deferred = F.android
        let heldBeforeARefusal = fold.holdIfRefused(paused, [1, 2], at: now)
        #expect(!heldBeforeARefusal)
        fold.refused(paused, BatchFold.Answered(refusedCredentials: true, pausePlatform: true))
        fold.refused(deferred, BatchFold.Answered(refusedCredentials: true, pausePlatform: false))
        fold.refused(F.web, BatchFold.Answered())
        let heldPaused = fold.holdIfRefused(paused, [1, 2], at: now)
        #expect(heldPaused)
        let heldDeferred = fold.holdIfRefused(deferred, [3], at: now)
        #expect(heldDeferred)
        let heldUnrefused = fold.holdIfRefused(F.web, [4], at: now)
        #expect(!heldUnrefused)
        let result = fold.take()
        #expect(result.retries[now.advanced(by: DeliveryRules().pausedDelay).epochMilliseconds].map(Set.init) == [1, 2])
        #expect(result.retries[now.advanced(by: .seconds(3)).epochMilliseconds] == [3])
        #expect(result.retries.count == 2)
    }

    /// Each device retries at its own instant: rounds that arrive at different times, and waits
    /// that differ, give batch jobs due at different times, none before its own wait.
    @Test func eachDeviceRetriesAtItsOwnInstant() {
        var fold = Self.fold(retryDelay: .seconds(2))
        let first = F.start.advanced(by: .seconds(1))
        let second = F.start.advanced(by: .seconds(9))
        _ = fold.answered(
            [F.target(1, .windows), F.target(2, .windows)],
            [.retry(reason: "Throttled", after: .seconds(3)), .retry(reason: "ServiceUnavailable", after: nil)], round: 0, stopping: false,
            at: first)
        _ = fold.answered([F.target(3, .windows)], [.retry(reason: "Throttled", after: .seconds(3))], round: 0, stopping: false, at: second)
        let result = fold.take()
        #expect(
            result.retries == [
                first.advanced(by: .seconds(3)).epochMilliseconds: [1],
                first.advanced(by: .seconds(2)).epochMilliseconds: [2],
                second.advanced(by: .seconds(3)).epochMilliseconds: [3],
            ])
    }

    @Test func onTheLastAttemptARetryIsAFailure() {
        var fold = Self.fold(attempt: 4)
        _ = fold.answered([F.target(1, .ios)], [.retry(reason: "TooManyRequests", after: nil)], round: 0, stopping: false, at: F.start)
        let result = fold.take()
        #expect(result.failed == ["TooManyRequests": 1])
        #expect(result.retries.isEmpty)
    }

    @Test func anUnansweredRequestIsResentAtOnceThenRetriedUntilTheWindowCloses() {
        var fold = Self.fold(attempt: 9)
        let device = F.target(1, .ios)
        let first = fold.answered([device], [.unanswered(reason: "connection reset")], round: 0, stopping: false, at: F.start)
        #expect(first.resend == [device])
        #expect(first.unreached == 0)
        let last = fold.answered([device], [.unanswered(reason: "TLS: certificate unknown")], round: 2, stopping: false, at: F.start)
        #expect(last.resend.isEmpty)
        #expect(last.unreached == 1)
        #expect(last.cause == "TLS: certificate unknown")
        // Not counted against the attempts: retried even past `maximumAttempts`.
        #expect(fold.take().retries == [F.start.advanced(by: .seconds(1)).epochMilliseconds: [1]])

        let late = F.start.advanced(by: .seconds(86_400))
        _ = fold.answered([device], [.unanswered(reason: "DNS")], round: 2, stopping: false, at: late)
        #expect(fold.take().failed == ["ProviderUnreachable": 1])
    }

    @Test func aStoppingWorkerReleasesWhatItWouldResend() {
        var fold = Self.fold()
        let answered = fold.answered(
            [F.target(1, .ios), F.target(2, .ios)], [.unanswered(reason: "reset"), .notAttempted], round: 0, stopping: true, at: F.start)
        #expect(answered.resend.isEmpty)
        #expect(fold.take().released == [1, 2])
    }

    @Test func goneAndFailedAreCounted() {
        var fold = Self.fold()
        let since = F.start.advanced(by: .seconds(-60))
        _ = fold.answered(
            [F.target(1, .ios), F.target(2, .ios), F.target(3, .ios)],
            [.gone(reason: "Unregistered", since: since), .gone(reason: "BadDeviceToken", since: nil), .failed(reason: "BadTopic")],
            round: 0, stopping: false, at: F.start)
        let result = fold.take()
        let gone: [Int64: Int64?] = [1: since.epochMilliseconds, 2: nil]
        #expect(result.gone == gone)
        #expect(result.goneReasons == [1: "Unregistered", 2: "BadDeviceToken"])
        #expect(result.failed == ["BadTopic": 1])
    }

    /// Issue 31, defect 2: the first refusal of the platform's credentials stops the batch for
    /// that platform; a final refusal (`credentialsRejected`) pauses the platform, and its
    /// devices wait the pause.
    @Test func refusedCredentialsAskToStopAndPause() {
        var fold = Self.fold()
        let once = fold.answered(
            [F.target(1, .ios)], [.retry(reason: "InvalidProviderToken", after: nil)], round: 0, stopping: false, at: F.start)
        #expect(once.refusedCredentials && !once.pausePlatform)
        let twice = fold.answered(
            [F.target(2, .ios)], [.credentialsRejected(reason: "InvalidProviderToken")], round: 0, stopping: false, at: F.start)
        #expect(twice.refusedCredentials && twice.pausePlatform)
        fold.paused([3, 4], at: F.start)
        fold.deferred([5], at: F.start)
        let result = fold.take()
        let minute = F.start.advanced(by: .seconds(60)).epochMilliseconds
        let second = F.start.advanced(by: .seconds(1)).epochMilliseconds
        #expect(result.retries == [second: [1, 5], minute: [2, 3, 4]])
    }

    /// Issue 31, defect 7: a batch's progress is taken part by part; what was taken is not
    /// taken again, and the whole is kept for the activity log.
    @Test func progressIsTakenPartByPart() {
        var fold = Self.fold()
        fold.result.skipped = 1
        _ = fold.answered([F.target(1, .ios), F.target(2, .ios)], [.delivered, .delivered], round: 0, stopping: false, at: F.start)
        let first = fold.take()
        #expect(first.delivered == 2 && first.skipped == 1)
        _ = fold.answered([F.target(3, .ios)], [.delivered], round: 0, stopping: false, at: F.start)
        let second = fold.take()
        #expect(second.delivered == 1 && second.skipped == 0)
        #expect(fold.recorded.delivered == 3 && fold.recorded.skipped == 1)
    }
}

/// Issue 31, defect 4: the cause shown to the app's operator keeps what fixes it and drops
/// what is a device's token.
@Suite struct ShownCauseTests {
    @Test func urlsAreCutToTheirOriginAndLongTextsShortened() {
        #expect(DeliveryTelemetry.shownCause("connect: Connection refused (errno: 111)") == "connect: Connection refused (errno: 111)")
        #expect(
            DeliveryTelemetry.shownCause("timed out sending to https://wns2-par02p.notify.windows.com/w/?token=SECRET now")
                == "timed out sending to https://wns2-par02p.notify.windows.com/… now")
        #expect(
            DeliveryTelemetry.shownCause("'https://push.example/send/abc' and http://h:8080")
                == "'https://push.example/…' and http://h:8080")
        #expect(DeliveryTelemetry.shownCause(String(repeating: "x", count: 400)).count == 300)
    }
}
