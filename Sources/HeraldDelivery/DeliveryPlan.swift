import HeraldAPNs
import HeraldCore
import HeraldStore

import struct Foundation.UUID

/// What sending a batch job comes to, decided without I/O and without reading a clock.
///
/// The dispatcher reads what the plan needs (the targets, their quiet-time ends, badge numbers,
/// the platforms' credentials) and hands it over with the instant it read the clock; the plan
/// answers with actions: the groups to send (each with its rendered content), and the devices
/// decided without a send (skipped, held for their quiet time, failed, a paused platform's held
/// for a retry), already folded into a `BatchFold`. The providers' answers go into that fold
/// (`BatchFold.answered`), each round with the instant it arrived.
///
/// Nine decisions live here and in `BatchFold`: expiry (`isExpired`), throttle (`turn`), targets
/// (`audience`), quiet time (`audience`, `quietTimeEnds`), badges (`Audience.badgeDevices`),
/// rendering and grouping by platform (`init`), credentials (`init`, `BatchFold.answered`) and
/// retry with backoff (`BatchFold`).
struct DeliveryPlan: Sendable {
    /// A platform's credentials as the batch finds them (`Senders.lookup`).
    enum Credentials: Sendable, Equatable {
        case ready
        /// None uploaded (or no provider for the platform's type): its devices fail.
        case missing
        /// The provider refused them: the platform is paused, its devices wait.
        case failing
    }

    /// Devices of one platform that get one rendering of the push.
    struct SendGroup: Sendable {
        var platformID: UUID
        var type: PlatformType
        var content: RenderedPush
        var devices: [DeliveryTarget]
    }

    /// The devices a batch sends to once the targets and quiet times are read.
    struct Audience: Sendable, Equatable {
        /// The devices to send to, in the job's order.
        var sending: [DeliveryTarget]
        /// Job devices that are no target any more (deleted, inactive).
        var skipped: Int
        /// Held for their quiet time (`"quiet_time": "hold"`): when it ends → the devices.
        var held: [EpochClock.Instant: [Int64]]
        /// In their quiet time with `"quiet_time": "silent"`: get the silent rendering.
        var quiet: Set<Int64>

        /// The devices whose badge numbers the push needs (the iOS devices sent to).
        var badgeDevices: [Int64] { sending.filter { $0.platformType == .ios }.map(\.id) }
    }

    /// A platform that cannot send, for the app's activity log.
    struct CredentialsProblem: Sendable, Equatable {
        var platformID: UUID
        var type: PlatformType
        var devices: Int
        var message: String
        /// The reason its devices failed, when they did (they may wait instead).
        var failed: String?
    }

    /// The groups to send, platform by platform.
    var sends: [SendGroup] = []
    /// The batch's result so far: what was decided without a send.
    var fold: BatchFold
    /// Platforms that cannot send, to be told to the app.
    var problems: [CredentialsProblem] = []

    // MARK: Expiry and throttle

    /// Whether a push that expires at `expiresAt` has expired at `now`: its batch is counted expired.
    static func isExpired(_ expiresAt: EpochClock.Instant?, at now: EpochClock.Instant) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt <= now
    }

    /// A throttled batch's turn: nil to send now, else when to be claimed again (`notBefore`,
    /// from the push's send gate, when another batch of it started less than a second ago).
    static func turn(throttled: Bool, notBefore: EpochClock.Instant?) -> EpochClock.Instant? {
        throttled ? notBefore : nil
    }

    // MARK: Targets and quiet time

    /// The job's devices that are targets, less those held for their quiet time, which `ends`
    /// gives (device → when it ends; empty for a push that ignores quiet time).
    static func audience(
        jobDevices: Int, targets: [DeliveryTarget], policy: QuietTimePolicy, ends: [Int64: EpochClock.Instant]
    ) -> Audience {
        var audience = Audience(sending: targets, skipped: jobDevices - targets.count, held: [:], quiet: [])
        switch policy {
        case .hold:
            for (id, end) in ends { audience.held[end, default: []].append(id) }
            for end in audience.held.keys { audience.held[end]?.sort() }
            audience.sending.removeAll { ends[$0.id] != nil }
        case .silent:
            audience.quiet = Set(ends.keys)
        case .ignore:
            break
        }
        return audience
    }

    // MARK: Rendering, grouping, credentials

    /// Plans the sends of `audience` at `now`.
    ///
    /// - Parameters:
    ///   - badges: device → the number it shows, for a push with a relative badge.
    ///   - credentials: each platform of the audience → its credentials' state.
    ///   - retryDelay: the backoff before this attempt's retries (`backoff(attempt:first:jitter:)`).
    /// - Throws: a push that does not render (a stored push Herald cannot deliver).
    init(
        push: Push, receiptID: String?, attempt: Int, pushCreatedAt: EpochClock.Instant, audience: Audience,
        badges: [Int64: Int64]?, credentials: [UUID: Credentials], rules: DeliveryRules, retryDelay: Duration, now: EpochClock.Instant
    ) throws(ValidationError) {
        fold = BatchFold(attempt: attempt, pushCreatedAt: pushCreatedAt, rules: rules, retryDelay: retryDelay)
        fold.result.skipped = audience.skipped
        for (end, devices) in audience.held { fold.result.held[end.epochMilliseconds] = devices }
        let targets = audience.sending
        let time = now.epochMilliseconds
        // Rendered once for the batch, per kind of device in it. Every provider rendered this
        // push when it was accepted (`AcceptedPush.check`), with a receipt id's worth of room.
        let rendered = try RenderedPush(push, receiptID: receiptID, types: Set(targets.map(\.platformType)), now: time, badges: badges)
        let silent =
            audience.quiet.isEmpty
            ? nil
            : RenderedPush.silenced(
                push, receiptID: receiptID, types: Set(targets.filter { audience.quiet.contains($0.id) }.map(\.platformType)), now: time,
                badges: badges)
        var byPlatform: [UUID: [DeliveryTarget]] = [:]
        var order: [UUID] = []
        for target in targets {
            if (audience.quiet.contains(target.id) ? silent ?? rendered : rendered).hasContent(for: target) {
                if byPlatform[target.platformID] == nil { order.append(target.platformID) }
                byPlatform[target.platformID, default: []].append(target)
            } else {
                // The push has nothing for this kind of device (or Herald no provider for it yet).
                fold.result.skipped += 1
            }
        }
        for platformID in order {
            guard let devices = byPlatform[platformID] else { continue }
            let type = devices[0].platformType
            switch credentials[platformID] ?? .missing {
            case .missing:
                fold.result.failed["CredentialsMissing", default: 0] += devices.count
                problems.append(
                    CredentialsProblem(
                        platformID: platformID, type: type, devices: devices.count,
                        message: "the platform has no credentials: its devices fail",
                        failed: "CredentialsMissing"))
            case .failing:
                fold.paused(devices.map(\.id), at: now)
                problems.append(
                    CredentialsProblem(
                        platformID: platformID, type: type, devices: devices.count,
                        message: "the platform is paused: the provider refused its credentials; upload new ones",
                        failed: fold.isLastAttempt ? "CredentialsFailing" : nil))
            case .ready:
                // Devices in their quiet time get the silent rendering, as a group of their own.
                let loud = silent == nil ? devices : devices.filter { !audience.quiet.contains($0.id) }
                if !loud.isEmpty { sends.append(SendGroup(platformID: platformID, type: type, content: rendered, devices: loud)) }
                if let silent {
                    let quiet = devices.filter { audience.quiet.contains($0.id) }
                    if !quiet.isEmpty { sends.append(SendGroup(platformID: platformID, type: type, content: silent, devices: quiet)) }
                }
            }
        }
    }

    // MARK: Sending in rounds

    /// How a group's devices are sent: a first round of at most `rules.probe` devices when the
    /// platform has not yet been seen to accept (so refused credentials cost a few requests,
    /// not the whole group), then rounds of at most `rules.progressEvery`.
    static func rounds(of count: Int, probing: Bool, rules: DeliveryRules) -> [Range<Int>] {
        var rounds: [Range<Int>] = []
        var start = 0
        if probing, rules.probe > 0, count > rules.probe {
            rounds.append(0..<rules.probe)
            start = rules.probe
        }
        let size = max(1, rules.progressEvery)
        while start < count {
            rounds.append(start..<min(count, start + size))
            start += size
        }
        return rounds
    }

    /// Whether an answer refuses the platform's credentials: `credentialsRejected`, or APNs's
    /// first refusal of a provider token (which comes back as `retry` while one more try is
    /// allowed). Either way the rest of the batch is not sent to that platform.
    static func refusesCredentials(_ outcome: DeliveryOutcome) -> Bool {
        switch outcome {
        case .credentialsRejected: true
        case .retry(let reason, _): APNsErrorReason(reason).meansCredentialsRejected
        case .delivered, .gone, .failed, .unanswered, .notAttempted: false
        }
    }

    // MARK: Backoff

    /// Exponential backoff: about `first`, twice that, four times … at most 5 minutes, the
    /// upper half of it chosen by `jitter` (0…1); whole milliseconds, as the store keeps them.
    static func backoff(attempt: Int, first: Duration = .seconds(1), jitter: Double) -> Duration {
        let base = min(300_000, max(2, first.milliseconds) * (Int64(1) << min(attempt, 20)))
        let spread = Int64((Double(base / 2) * min(1, max(0, jitter))).rounded(.down))
        return .milliseconds(base / 2 + spread)
    }
}
