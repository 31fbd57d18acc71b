import Foundation
import HeraldCore
import HeraldStore

@testable import HeraldDelivery

/// Pushes, devices and instants for the plan's tests: no store, no sockets, no wall clock.
enum PlanFixture {
    static let start = EpochClock.Instant(epochMilliseconds: 1_800_000_000_000)
    static let ios = UUID()
    static let android = UUID()
    static let web = UUID()

    /// A push as the API accepts it, from its JSON (without a target: to every device).
    static func push(_ json: String) throws -> Push {
        var json = json
        if !json.contains(#""target""#) { json = String(json.dropLast()) + #","target":{"platform":"all"}}"# }
        return try JSONDecoder().decode(PushInput.self, from: Data(json.utf8)).validated(now: start.epochMilliseconds)
    }

    static func target(_ id: Int64, _ type: PlatformType, quiet: QuietTime? = nil, zone: String? = nil) -> DeliveryTarget {
        let platform =
            switch type {
            case .ios: ios
            case .android: android
            case .web: web
            case .windows: UUID()
            }
        return DeliveryTarget(id: id, platformID: platform, platformType: type, token: "token-\(id)", timeZone: zone, quietTime: quiet)
    }

    static func rules(_ change: (inout DeliveryRules) -> Void = { _ in }) -> DeliveryRules {
        var rules = DeliveryRules()
        change(&rules)
        return rules
    }

    /// The plan of `targets` (all of the job's devices, none held) with every platform ready.
    static func plan(
        _ push: Push, _ targets: [DeliveryTarget], attempt: Int = 0, credentials: [UUID: DeliveryPlan.Credentials]? = nil,
        badges: [Int64: Int64]? = nil, rules: DeliveryRules = DeliveryRules(), retryDelay: Duration = .seconds(1),
        now: EpochClock.Instant = start
    ) throws -> DeliveryPlan {
        let audience = DeliveryPlan.audience(jobDevices: targets.count, targets: targets, policy: push.quietTime, ends: [:])
        return try DeliveryPlan(
            push: push, receiptID: nil, attempt: attempt, pushCreatedAt: start, audience: audience, badges: badges,
            credentials: credentials ?? [ios: .ready, android: .ready, web: .ready], rules: rules, retryDelay: retryDelay, now: now)
    }
}
