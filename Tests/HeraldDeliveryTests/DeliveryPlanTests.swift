import Foundation
import HeraldCore
import HeraldStore
import Testing

@testable import HeraldDelivery

/// The nine decisions of a batch, each reached without a store, a socket or a wall clock.
@Suite struct DeliveryPlanTests {
    typealias F = PlanFixture

    // MARK: 1. Expiry

    @Test func aPushPastItsExpiryIsExpiredAndOneBeforeItIsNot() {
        let expiry = F.start.advanced(by: .seconds(10))
        #expect(!DeliveryPlan.isExpired(nil, at: F.start))
        #expect(!DeliveryPlan.isExpired(expiry, at: F.start.advanced(by: .seconds(9))))
        #expect(DeliveryPlan.isExpired(expiry, at: expiry))
        #expect(DeliveryPlan.isExpired(expiry, at: F.start.advanced(by: .seconds(11))))
    }

    // MARK: 2. Throttle

    @Test func aThrottledBatchWaitsForItsTurnAndAnOtherBatchDoesNot() {
        let slot = F.start.advanced(by: .milliseconds(400))
        #expect(DeliveryPlan.turn(throttled: true, notBefore: slot) == slot)
        #expect(DeliveryPlan.turn(throttled: true, notBefore: nil) == nil)
        #expect(DeliveryPlan.turn(throttled: false, notBefore: slot) == nil)
    }

    // MARK: 3. Targets

    @Test func jobDevicesThatAreNoTargetAreSkipped() throws {
        let targets = [F.target(1, .ios), F.target(3, .android)]
        let audience = DeliveryPlan.audience(jobDevices: 4, targets: targets, policy: .ignore, ends: [:])
        #expect(audience.skipped == 2)
        #expect(audience.sending == targets)
        let plan = try DeliveryPlan(
            push: try F.push(#"{"message":{"body":"x"}}"#), receiptID: nil, attempt: 0, pushCreatedAt: F.start, audience: audience,
            badges: nil, credentials: [F.ios: .ready, F.android: .ready], rules: DeliveryRules(), retryDelay: .seconds(1), now: F.start)
        #expect(plan.fold.result.skipped == 2)
    }

    // MARK: 4. Quiet time

    @Test func quietTimeEndsAreReadInTheDevicesZoneOrTheAppsDefault() throws {
        // 1_800_000_000_000 ms is 2027-01-15 08:00 UTC.
        let night = try QuietTime(start: "07:00", end: "09:00", field: "q")
        let own = F.target(1, .ios, quiet: night, zone: "UTC")
        let elsewhere = F.target(2, .ios, quiet: night, zone: "Asia/Tokyo")
        let byApp = F.target(3, .ios)
        let ends = DeliveryPlan.quietTimeEnds(
            [own, elsewhere, byApp], settings: AppDeliverySettings(defaultTimeZone: "UTC", quietTime: night), now: F.start)
        #expect(ends[1] == F.start.advanced(by: .seconds(3600)))
        #expect(ends[2] == nil)
        #expect(ends[3] == F.start.advanced(by: .seconds(3600)))
        #expect(DeliveryPlan.quietTimeEnds([byApp], settings: AppDeliverySettings(), now: F.start).isEmpty)
    }

    @Test func holdKeepsQuietDevicesBackUntilTheirQuietTimeEnds() throws {
        let end = F.start.advanced(by: .seconds(600))
        let targets = [F.target(1, .ios), F.target(2, .ios), F.target(3, .android)]
        let audience = DeliveryPlan.audience(jobDevices: 3, targets: targets, policy: .hold, ends: [2: end, 3: end])
        #expect(audience.sending.map(\.id) == [1])
        #expect(audience.held == [end: [2, 3]])
        let plan = try DeliveryPlan(
            push: try F.push(#"{"message":{"body":"x"},"quiet_time":"hold"}"#), receiptID: nil, attempt: 0, pushCreatedAt: F.start,
            audience: audience, badges: nil, credentials: [F.ios: .ready], rules: DeliveryRules(), retryDelay: .seconds(1), now: F.start)
        #expect(plan.fold.result.held == [end.epochMilliseconds: [2, 3]])
        #expect(plan.sends.map { $0.devices.map(\.id) } == [[1]])
    }

    @Test func silentSendsQuietDevicesTheSilentRenderingAsAGroupOfTheirOwn() throws {
        let push = try F.push(#"{"message":{"body":"hello","custom":{"ios":{"sound":"bell"}}},"quiet_time":"silent"}"#)
        let targets = [F.target(1, .ios), F.target(2, .ios)]
        let audience = DeliveryPlan.audience(
            jobDevices: 2, targets: targets, policy: .silent, ends: [2: F.start.advanced(by: .seconds(60))])
        #expect(audience.quiet == [2])
        let plan = try DeliveryPlan(
            push: push, receiptID: nil, attempt: 0, pushCreatedAt: F.start, audience: audience, badges: nil,
            credentials: [F.ios: .ready], rules: DeliveryRules(), retryDelay: .seconds(1), now: F.start)
        #expect(plan.sends.map { $0.devices.map(\.id) } == [[1], [2]])
        let loud = try #require(plan.sends[0].content.apns)
        let quiet = try #require(plan.sends[1].content.apns)
        #expect(loud != quiet)
    }

    // MARK: 5. Badges

    @Test func aRelativeBadgeAsksForTheNumbersOfTheIOSDevicesSentToAndRendersOnePerNumber() throws {
        let targets = [F.target(1, .ios), F.target(2, .android), F.target(3, .ios), F.target(4, .ios)]
        let audience = DeliveryPlan.audience(jobDevices: 4, targets: targets, policy: .hold, ends: [4: F.start.advanced(by: .seconds(5))])
        #expect(audience.badgeDevices == [1, 3])
        let push = try F.push(#"{"message":{"body":"x","custom":{"ios":{"badge":"+1"}}}}"#)
        let plan = try F.plan(push, [F.target(1, .ios), F.target(3, .ios)], badges: [1: 4, 3: 7])
        let badged = try #require(plan.sends.first?.content.badged)
        #expect(badged.numbers == [1: 4, 3: 7])
        #expect(Set(badged.notifications.keys) == [4, 7])
    }

    // MARK: 6. Rendering

    @Test func eachKindOfDeviceGetsItsProvidersRenderingOnce() throws {
        let plan = try F.plan(try F.push(#"{"message":{"body":"x"}}"#), [F.target(1, .ios), F.target(2, .android), F.target(3, .web)])
        let content = try #require(plan.sends.first?.content)
        #expect(content.apns != nil)
        #expect(content.fcm != nil)
        #expect(content.webPush != nil)
        #expect(content.wns == nil)
    }

    @Test func aDeviceThePushHasNothingForIsSkipped() throws {
        // A relative badge's iOS device without a number (it was deleted meanwhile) has no
        // notification of its own.
        let push = try F.push(#"{"message":{"body":"x","custom":{"ios":{"badge":"+1"}}}}"#)
        let plan = try F.plan(push, [F.target(1, .ios), F.target(3, .ios)], badges: [1: 4])
        #expect(plan.sends.map { $0.devices.map(\.id) } == [[1]])
        #expect(plan.fold.result.skipped == 1)
    }

    // MARK: 7. Grouping by platform

    @Test func devicesAreGroupedByPlatformInTheOrderTheyCome() throws {
        let targets = [F.target(5, .android), F.target(1, .ios), F.target(6, .android), F.target(2, .ios)]
        let plan = try F.plan(try F.push(#"{"message":{"body":"x"}}"#), targets)
        #expect(plan.sends.map(\.platformID) == [F.android, F.ios])
        #expect(plan.sends.map { $0.devices.map(\.id) } == [[5, 6], [1, 2]])
    }

    @Test func aGroupIsSentInRoundsProbingAPlatformNotYetSeenToAccept() {
        let rules = F.rules {
            $0.progressEvery = 1000
            $0.probe = 50
        }
        #expect(DeliveryPlan.rounds(of: 2500, probing: true, rules: rules) == [0..<50, 50..<1050, 1050..<2050, 2050..<2500])
        #expect(DeliveryPlan.rounds(of: 2500, probing: false, rules: rules) == [0..<1000, 1000..<2000, 2000..<2500])
        #expect(DeliveryPlan.rounds(of: 30, probing: true, rules: rules) == [0..<30])
        #expect(DeliveryPlan.rounds(of: 0, probing: true, rules: rules).isEmpty)
    }

    // MARK: 8. Credentials

    @Test func aPlatformWithoutCredentialsFailsItsDevices() throws {
        let plan = try F.plan(
            try F.push(#"{"message":{"body":"x"}}"#), [F.target(1, .ios), F.target(2, .android)],
            credentials: [F.ios: .missing, F.android: .ready])
        #expect(plan.fold.result.failed == ["CredentialsMissing": 1])
        #expect(plan.sends.map(\.platformID) == [F.android])
        #expect(plan.problems.map(\.failed) == ["CredentialsMissing"])
    }

    @Test func aPausedPlatformsDevicesWaitAMinuteThenFailOnTheLastAttempt() throws {
        let push = try F.push(#"{"message":{"body":"x"}}"#)
        var plan = try F.plan(push, [F.target(1, .ios), F.target(2, .ios)], credentials: [F.ios: .failing])
        #expect(plan.sends.isEmpty)
        #expect(plan.problems.count == 1 && plan.problems[0].failed == nil)
        let waiting = plan.fold.take()
        #expect(waiting.retries == [F.start.advanced(by: .seconds(60)).epochMilliseconds: [1, 2]])
        #expect(waiting.failed.isEmpty)

        var last = try F.plan(push, [F.target(1, .ios)], attempt: 4, credentials: [F.ios: .failing])
        let failed = last.fold.take()
        #expect(failed.failed == ["CredentialsFailing": 1])
        #expect(failed.retries.isEmpty)
        _ = plan
    }

    @Test func aRefusedProviderTokenOrRejectedCredentialsStopTheBatchForThatPlatform() {
        #expect(DeliveryPlan.refusesCredentials(.credentialsRejected(reason: "Forbidden")))
        #expect(DeliveryPlan.refusesCredentials(.retry(reason: "InvalidProviderToken", after: nil)))
        #expect(DeliveryPlan.refusesCredentials(.retry(reason: "ExpiredProviderToken", after: nil)))
        #expect(!DeliveryPlan.refusesCredentials(.retry(reason: "TooManyRequests", after: nil)))
        #expect(!DeliveryPlan.refusesCredentials(.retry(reason: "QUOTA_EXCEEDED", after: .seconds(4))))
        #expect(!DeliveryPlan.refusesCredentials(.unanswered(reason: "connection reset")))
    }

    // MARK: 9. Retry and backoff

    @Test func backoffDoublesFromTheFirstDelayWithinItsUpperHalfAndIsBounded() {
        #expect(DeliveryPlan.backoff(attempt: 0, jitter: 0) == .milliseconds(500))
        #expect(DeliveryPlan.backoff(attempt: 0, jitter: 1) == .milliseconds(1000))
        #expect(DeliveryPlan.backoff(attempt: 3, jitter: 0) == .milliseconds(4000))
        #expect(DeliveryPlan.backoff(attempt: 2, first: .milliseconds(100), jitter: 1) == .milliseconds(400))
        #expect(DeliveryPlan.backoff(attempt: 40, jitter: 1) == .seconds(300))
        #expect(DeliveryPlan.backoff(attempt: 40, jitter: 7) == .seconds(300))
    }
}
