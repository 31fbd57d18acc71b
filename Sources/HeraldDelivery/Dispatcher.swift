import HeraldAPNs
import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle
import struct Foundation.UUID

/// Works one job: turns a fan-out into batches, or sends a batch and records what came of it.
///
/// Providers report outcomes; the mapping from outcome to action (count, deactivate, retry,
/// pause the platform) is here, in one place.
///
/// On a graceful shutdown a job in hand is cut short, not abandoned: a fan-out stops between
/// pages (its cursor is saved) and is put back; a batch starts no new sends, waits for the
/// answers of those in flight, records them, and puts the devices it did not send back in a new
/// batch due at once.
struct Dispatcher: Sendable {
    /// A request that failed below HTTP (a reset connection, a stream refused after GOAWAY) is
    /// sent again at once on a new connection this many times before it waits for a retry job.
    static let immediateResends = 2

    let store: Store
    let configuration: DeliveryConfiguration
    let senders: Senders
    /// The wall clock; the store gets its instants as epoch milliseconds.
    let clock: EpochClock
    let logger: Logger
    /// Metrics and the apps' activity logs.
    var telemetry = DeliveryTelemetry()

    func process(_ claimed: ClaimedJob) async throws {
        let job = claimed.job
        let stored = claimed.push
        let push: Push
        do {
            // Checked when it was accepted: only decoded here.
            push = try stored.accepted().push
        } catch {
            try await failUndeliverable(job, stored, error)
            return
        }
        switch job.kind {
        case .fanout: try await fanOut(job, push, stored)
        case .batch: try await send(job, push, claimed)
        }
    }

    /// A stored push Herald cannot deliver (unreadable, written by a newer Herald, an older
    /// Herald's push that no longer validates): the job's devices fail, it is not retried forever.
    private func failUndeliverable(_ job: PushJob, _ stored: StoredPush, _ error: any Error) async throws {
        logger.error("stored push cannot be delivered", metadata: ["push": "\(stored.id)", "error": "\(error)"])
        var result = BatchResult()
        result.failed["InvalidStoredPush"] = job.deviceIDs.count
        try await store.pushes.complete(job, result)
    }

    // MARK: Fan-out

    private func fanOut(_ job: PushJob, _ push: Push, _ stored: StoredPush) async throws {
        var job = job
        // A throttled push (`rate`, or the app's default) gets batches of at most its rate, each
        // claimable a second after the one before (see `PushRepository.advance`).
        var rate = push.ratePerSecond
        if rate == nil { rate = try await store.deliverySettings.find(applicationID: stored.applicationID).ratePerSecond }
        let limit = min(configuration.batchSize, rate ?? configuration.batchSize)
        // A local-time slot's push is for the devices in its zones (none: every device); a
        // local-time occurrence's fan-outs each for their own group of zones.
        var zones = job.timeZones ?? []
        if job.timeZones == nil { zones = try await store.pushes.timeZones(of: stored.id) }
        while true {
            let page = try await store.pushes.audiencePage(
                of: push, applicationID: stored.applicationID, after: job.cursor, limit: limit, timeZones: zones)
            try await store.pushes.advance(job, page: page.deviceIDs, through: page.cursor, finished: page.exhausted, ratePerSecond: rate)
            if page.exhausted { return }
            job.cursor = page.cursor
            if Task.isShuttingDownGracefully {
                // The cursor is saved: the next worker (here or in another process) goes on from it.
                try await store.pushes.release(job, availableAt: clock.now.epochMilliseconds)
                return
            }
        }
    }

    // MARK: Sending

    private func send(_ job: PushJob, _ push: Push, _ claimed: ClaimedJob) async throws {
        let stored = claimed.push
        var result = BatchResult()
        let now = clock.now
        let time = now.epochMilliseconds
        if let expiresAt = push.expiresAt, expiresAt <= time {
            result.expired = job.deviceIDs.count
            try await store.pushes.complete(job, result)
            telemetry.batchFinished(job, applicationID: stored.applicationID, result: result, time: time)
            return
        }
        if claimed.throttled, let notBefore = try await store.pushes.takeSendSlot(pushID: stored.id) {
            // A throttled push whose previous batch started less than a second ago (in this
            // process or another): this one waits its turn.
            try await store.pushes.release(job, availableAt: notBefore)
            return
        }
        var targets = try await store.pushes.targets(job.deviceIDs, quietTime: push.quietTime != .ignore)
        result.skipped = job.deviceIDs.count - targets.count
        // A push whose quiet time matters: the devices in theirs now are held until it ends, or
        // get the silent rendering. Every other push takes none of this path.
        var quiet: Set<Int64> = []
        if push.quietTime != .ignore {
            let ends = try await quietTimeEnds(targets, applicationID: stored.applicationID, now: time)
            switch push.quietTime {
            case .hold:
                for (id, end) in ends { result.held[end, default: []].append(id) }
                for end in result.held.keys { result.held[end]?.sort() }
                targets.removeAll { ends[$0.id] != nil }
            case .silent:
                quiet = Set(ends.keys)
            case .ignore:
                break
            }
        }
        // The iOS badge count Herald keeps: a relative badge counts each device once per push
        // (also when this batch is a retry or a redelivery), a number sets it.
        var badges: [Int64: Int64]?
        switch push.badge {
        case nil: break
        case .add(let delta)?:
            badges = try await store.pushes.badges(
                for: job, adding: delta, deviceIDs: targets.filter { $0.platformType == .ios }.map(\.id))
        case .set(let value)?:
            try await store.pushes.setBadges(value, deviceIDs: targets.filter { $0.platformType == .ios }.map(\.id))
        }

        // The app may have turned receipts off since the push was accepted: read with each claim.
        // Rendered once for the batch, per kind of device in it. Every provider rendered this push
        // when it was accepted (`AcceptedPush.check`), with a receipt id's worth of room.
        let rendered: RenderedPush
        do {
            rendered = try RenderedPush(
                push, receiptID: claimed.includesReceiptID ? stored.id.lowercasedString : nil,
                types: Set(targets.map(\.platformType)), now: time, badges: badges)
        } catch {
            try await failUndeliverable(job, stored, error)
            return
        }
        let silent = quiet.isEmpty ? nil : RenderedPush.silenced(
            push, receiptID: claimed.includesReceiptID ? stored.id.lowercasedString : nil,
            types: Set(targets.filter { quiet.contains($0.id) }.map(\.platformType)), now: time, badges: badges)
        var byPlatform: [UUID: [DeliveryTarget]] = [:]
        for target in targets {
            if (quiet.contains(target.id) ? silent ?? rendered : rendered).hasContent(for: target) {
                byPlatform[target.platformID, default: []].append(target)
            } else {
                // The push has nothing for this kind of device (or Herald no provider for it yet).
                result.skipped += 1
            }
        }
        var held: [Int64] = []
        var providerDelay: Duration = .zero
        for (platformID, devices) in byPlatform {
            let type = devices[0].platformType
            switch try await senders.lookup(platformID) {
            case .missing:
                result.failed["CredentialsMissing", default: 0] += devices.count
                telemetry.metrics.recordUnsent(provider: DeliveryMetrics.provider(for: type), reason: "CredentialsMissing", count: devices.count)
                telemetry.credentialsProblem(
                    platformID: platformID, type: type, applicationID: stored.applicationID, devices: devices.count,
                    message: "the platform has no credentials: its devices fail", time: time)
            case .failing:
                if job.attempt + 1 >= configuration.maximumAttempts {
                    result.failed["CredentialsFailing", default: 0] += devices.count
                    telemetry.metrics.recordUnsent(
                        provider: DeliveryMetrics.provider(for: type), reason: "CredentialsFailing", count: devices.count)
                } else {
                    held += devices.map(\.id)
                }
                telemetry.credentialsProblem(
                    platformID: platformID, type: type, applicationID: stored.applicationID, devices: devices.count,
                    message: "the platform is paused: the provider refused its credentials; upload new ones", time: time)
            case .ready(let sender):
                // Devices in their quiet time get the silent rendering, as a group of their own.
                var groups = [(rendered, devices)]
                if let silent {
                    groups = [(rendered, devices.filter { !quiet.contains($0.id) }), (silent, devices.filter { quiet.contains($0.id) })]
                }
                for (content, group) in groups where !group.isEmpty {
                    try await deliver(
                        content, to: group, with: sender, platformID: platformID, applicationID: stored.applicationID,
                        attempt: job.attempt, pushAge: EpochClock.Instant(epochMilliseconds: stored.createdAt).duration(to: now),
                        into: &result, providerDelay: &providerDelay)
                }
            }
        }
        if !result.released.isEmpty {
            logger.info(
                "shutting down: the devices not yet sent go back to the queue",
                metadata: ["push": "\(stored.id)", "devices": "\(result.released.count)"])
        }
        if !result.retry.isEmpty || !held.isEmpty {
            // A paused platform's devices wait a minute: its credentials may be fixed meanwhile.
            // Otherwise back off, and at least as long as a provider asked (Retry-After).
            result.retry += held
            let delay = held.isEmpty ? max(Self.backoff(attempt: job.attempt, first: configuration.firstRetryDelay), providerDelay) : .seconds(60)
            result.retryAt = now.advanced(by: delay).epochMilliseconds
        }
        try await store.pushes.complete(job, result)
        telemetry.batchFinished(job, applicationID: stored.applicationID, result: result, time: clock.now.epochMilliseconds)
    }

    /// Sends to one platform's devices and folds the outcomes into `result`: devices not sent
    /// because the process is shutting down go to `result.released`. `age` is how long ago the
    /// push was accepted.
    private func deliver(
        _ rendered: RenderedPush, to devices: [DeliveryTarget], with sender: PlatformSender, platformID: UUID, applicationID: UUID,
        attempt: Int, pushAge age: Duration, into result: inout BatchResult, providerDelay: inout Duration
    ) async throws {
        // The devices whose outcome needs more than a count (nearly none: delivered is counted).
        var outcomes: [(DeliveryTarget, DeliveryOutcome)] = []
        var delivered = 0
        var pending = devices
        for round in 0...Self.immediateResends {
            let sent = await sender.send(rendered, to: pending)
            telemetry.recordRound(provider: sender.provider, sent)
            let attempted = pending
            pending = []
            for (device, outcome) in zip(attempted, sent) {
                switch outcome {
                case .delivered:
                    delivered += 1
                case .notAttempted:
                    result.released.append(device.id)
                case .unanswered(let reason) where round < Self.immediateResends:
                    // Failed below HTTP (a reset connection): sent again at once, on a new connection.
                    logger.debug(
                        "a request got no answer; sending again",
                        metadata: ["error": "\(telemetry.loggableReason(reason))"])
                    if Task.isShuttingDownGracefully {
                        result.released.append(device.id)
                    } else {
                        pending.append(device)
                    }
                case .gone, .retry, .credentialsRejected, .failed, .unanswered:
                    outcomes.append((device, outcome))
                }
            }
            if pending.isEmpty { break }
        }

        // The provider client has spent its own remedies (a fresh token) before it says so.
        let refused = outcomes.filter { if case .credentialsRejected = $0.1 { true } else { false } }.count
        if refused > 0 {
            logger.warning("the provider rejected the platform's credentials; its sends are paused", metadata: ["platform": "\(platformID)"])
            telemetry.credentialsProblem(
                platformID: platformID, type: devices[0].platformType, applicationID: applicationID, devices: refused,
                message: "the provider refused the platform's credentials: its sends are paused", time: clock.now.epochMilliseconds)
            try await store.platforms.setCredentialsStatus(id: platformID, .failing)
            await senders.reset(platformID)
        }
        let lastAttempt = attempt + 1 >= configuration.maximumAttempts
        for (device, outcome) in outcomes {
            switch outcome {
            case .delivered:
                // Counted as it came.
                break
            case .gone(let reason, let since):
                // `.some`: the device is gone even when the provider gave no time (a nil value).
                result.gone[device.id] = .some(since?.epochMilliseconds)
                result.goneReasons[device.id] = reason
                logger.debug(
                    "the provider says the device token is gone; the device is deactivated",
                    metadata: ["platform": "\(platformID)", "token": "\(telemetry.logSensitivity.loggable(device.token))"])
            case .retry(let reason, let after):
                if lastAttempt {
                    result.failed[reason, default: 0] += 1
                } else {
                    result.retry.append(device.id)
                    if let after { providerDelay = max(providerDelay, after) }
                }
            case .credentialsRejected(let reason):
                if lastAttempt {
                    result.failed[reason, default: 0] += 1
                } else {
                    result.retry.append(device.id)
                }
            case .failed(let reason):
                result.failed[reason, default: 0] += 1
                logger.debug(
                    "a notification failed for good",
                    metadata: ["reason": "\(telemetry.loggableReason(reason))", "token": "\(telemetry.logSensitivity.loggable(device.token))"])
            case .unanswered(let reason):
                // Nothing came back from the provider: an outage is waited out, not counted
                // against the attempts a provider's answers get.
                logger.debug("a request got no answer", metadata: ["error": "\(telemetry.loggableReason(reason))"])
                if age >= configuration.unreachableRetryWindow {
                    result.failed["ProviderUnreachable", default: 0] += 1
                } else {
                    result.retry.append(device.id)
                }
            case .notAttempted:
                result.released.append(device.id)
            }
        }
        result.delivered += delivered
    }

    /// Exponential backoff with jitter: about `first`, twice that, four times … at most 5
    /// minutes; whole milliseconds, as the store keeps it.
    static func backoff(attempt: Int, first: Duration = .seconds(1)) -> Duration {
        let base = min(300_000, max(2, first.milliseconds) * (Int64(1) << min(attempt, 20)))
        return .milliseconds(base / 2 + Int64.random(in: 0...(base / 2)))
    }
}
