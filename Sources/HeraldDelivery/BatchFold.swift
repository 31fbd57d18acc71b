import HeraldCore
import HeraldStore

import struct Foundation.UUID

/// A batch's result in the making: what `DeliveryPlan` decided without a send, then the
/// providers' answers, each round folded in with the instant it arrived. No I/O, no clock.
///
/// Each device to retry gets its own instant: its answer's arrival plus the backoff, or plus
/// the provider's wait (`Retry-After`, `X-WNS-CONTINUE-AFTER`) when that is longer. The wait
/// runs from when the refusal arrived, never from when the batch started, so a retry never goes
/// out before the provider asked. The store keeps one batch job per instant (`BatchResult.retries`).
struct BatchFold: Sendable {
    /// What one round of answers asks of the dispatcher.
    struct Answered: Sendable, Equatable {
        /// Failed below HTTP: send again at once, on a new connection.
        var resend: [DeliveryTarget] = []
        /// The provider refused the platform's credentials: send it nothing more in this batch.
        var refusedCredentials = false
        /// Some of the refusals were final (`credentialsRejected`): pause the platform.
        var pausePlatform = false
        /// Devices that got no answer even after the immediate resends, and the latest cause.
        var unreached = 0
        var cause: String?

        /// Takes in a later round's answers; the resends are the later round's.
        mutating func absorb(_ later: Answered) {
            resend = later.resend
            refusedCredentials = refusedCredentials || later.refusedCredentials
            pausePlatform = pausePlatform || later.pausePlatform
            unreached += later.unreached
            cause = later.cause ?? cause
        }
    }

    let attempt: Int
    let pushCreatedAt: EpochClock.Instant
    let rules: DeliveryRules
    /// The backoff of this attempt's retries.
    let retryDelay: Duration
    /// The outcomes not yet recorded, retries aside.
    var result = BatchResult()
    /// Devices to try again at the next attempt → when.
    var retries: [Int64: EpochClock.Instant] = [:]
    /// Providers that gave no answer, by cause → devices, and the latest cause.
    var unanswered: [String: Int] = [:]
    var lastUnanswered: String?
    /// What `take()` handed out so far, all of it.
    private(set) var recorded = BatchResult()
    /// Platforms whose credentials the provider refused in this batch → whether that paused them.
    private(set) var refusedPlatforms: [UUID: Bool] = [:]

    init(attempt: Int, pushCreatedAt: EpochClock.Instant, rules: DeliveryRules, retryDelay: Duration) {
        self.attempt = attempt
        self.pushCreatedAt = pushCreatedAt
        self.rules = rules
        self.retryDelay = retryDelay
    }

    /// Whether this is the devices' last try when the provider answers.
    var isLastAttempt: Bool { attempt + 1 >= rules.maximumAttempts }

    /// Devices of a paused platform, or not sent because the provider refused its credentials
    /// at `now`: they wait for new credentials (`rules.pausedDelay`), or fail on the last attempt.
    mutating func paused(_ devices: [Int64], at now: EpochClock.Instant) {
        guard !devices.isEmpty else { return }
        if isLastAttempt {
            result.failed["CredentialsFailing", default: 0] += devices.count
        } else {
            for id in devices { retries[id] = now.advanced(by: rules.pausedDelay) }
        }
    }

    /// Devices not sent after APNs's first refusal of a token (one more try is due): tried again
    /// after the backoff, with the rest of the refused.
    mutating func deferred(_ devices: [Int64], at now: EpochClock.Instant) {
        if isLastAttempt {
            paused(devices, at: now)
        } else {
            for id in devices { retries[id] = now.advanced(by: retryDelay) }
        }
    }

    /// Notes a refusal of `platformID`'s credentials (`answered`'s): the batch sends it nothing more.
    mutating func refused(_ platformID: UUID, _ answered: Answered) {
        guard answered.refusedCredentials else { return }
        refusedPlatforms[platformID] = answered.pausePlatform
    }

    /// A round for a platform whose credentials were refused earlier in the batch is not sent
    /// (Apple says not to send again under refused credentials): its devices wait as a paused
    /// platform's, or, after a first refusal of an APNs token, for the backoff. True if held.
    mutating func holdIfRefused(_ platformID: UUID, _ devices: [Int64], at now: EpochClock.Instant) -> Bool {
        guard let paused = refusedPlatforms[platformID] else { return false }
        if paused { self.paused(devices, at: now) } else { deferred(devices, at: now) }
        return true
    }

    /// Devices not sent because the process is stopping: due again at once, same attempt.
    mutating func released(_ devices: [Int64]) {
        result.released += devices
    }

    /// Folds in the answers to one round of sends (`outcomes`, in `devices`' order) that arrived
    /// at `arrived`; `round` counts the immediate resends, `stopping` is a graceful shutdown.
    mutating func answered(
        _ devices: [DeliveryTarget], _ outcomes: [DeliveryOutcome], round: Int, stopping: Bool, at arrived: EpochClock.Instant
    ) -> Answered {
        var answered = Answered()
        for (device, outcome) in zip(devices, outcomes) {
            switch outcome {
            case .delivered:
                result.delivered += 1
            case .notAttempted:
                result.released.append(device.id)
            case .unanswered(let reason):
                unanswered[reason, default: 0] += 1
                if round < rules.immediateResends {
                    // Failed below HTTP (a reset connection): sent again at once, on a new connection.
                    if stopping { result.released.append(device.id) } else { answered.resend.append(device) }
                    continue
                }
                answered.unreached += 1
                answered.cause = DeliveryTelemetry.shownCause(reason)
                lastUnanswered = answered.cause
                if pushCreatedAt.duration(to: arrived) >= rules.unreachableRetryWindow {
                    result.failed["ProviderUnreachable", default: 0] += 1
                } else {
                    // Nothing came back from the provider: an outage is waited out, not counted
                    // against the attempts a provider's answers get.
                    retries[device.id] = arrived.advanced(by: retryDelay)
                }
            case .gone(let reason, let since):
                // `.some`: the device is gone even when the provider gave no time (a nil value).
                result.gone[device.id] = .some(since?.epochMilliseconds)
                result.goneReasons[device.id] = reason
            case .retry(let reason, let after):
                if DeliveryPlan.refusesCredentials(outcome) { answered.refusedCredentials = true }
                if isLastAttempt {
                    result.failed[reason, default: 0] += 1
                } else {
                    retries[device.id] = arrived.advanced(by: max(retryDelay, after ?? .zero))
                }
            case .credentialsRejected(let reason):
                answered.refusedCredentials = true
                answered.pausePlatform = true
                if isLastAttempt {
                    result.failed[reason, default: 0] += 1
                } else {
                    retries[device.id] = arrived.advanced(by: rules.pausedDelay)
                }
            case .failed(let reason):
                result.failed[reason, default: 0] += 1
            }
        }
        return answered
    }

    /// The outcomes folded in since the last `take()`, as the store records them; the fold goes
    /// on empty.
    mutating func take() -> BatchResult {
        var taken = result
        taken.lastError = lastUnanswered
        lastUnanswered = nil
        for (id, due) in retries.sorted(by: { $0.key < $1.key }) {
            taken.retries[due.epochMilliseconds, default: []].append(id)
        }
        result = BatchResult()
        retries = [:]
        recorded.merge(taken)
        return taken
    }
}
