import HeraldAPNs
import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle

import struct Foundation.UUID

/// Works one job: turns a fan-out into batches, or sends a batch and records what came of it.
///
/// The I/O around `DeliveryPlan`: the plan decides what a batch comes to and `BatchFold` what
/// the providers' answers mean (count, deactivate, retry at which instant, pause the platform);
/// this reads, sends, records and tells.
///
/// On a graceful shutdown a job in hand is cut short, not abandoned: a fan-out stops between
/// pages (its cursor is saved) and is put back; a batch starts no new sends, waits for the
/// answers of those in flight, records them, and puts the devices it did not send back in a new
/// batch due at once.
struct Dispatcher: Sendable {
    /// A request that failed below HTTP (a reset connection, a stream refused after GOAWAY) is
    /// sent again at once on a new connection this many times before it waits for a retry job.
    static let immediateResends = DeliveryRules().immediateResends

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

    /// Sends a batch: reads what `DeliveryPlan` needs, sends the groups it plans round by round,
    /// folds the answers in (`BatchFold`) and records them. Every decision is the plan's; this
    /// is the I/O around it.
    ///
    /// The batch's progress is recorded every `progressEvery` devices sent (the job keeps the
    /// devices not yet sent), so a worker killed mid-batch resends at most that many.
    private func send(_ job: PushJob, _ push: Push, _ claimed: ClaimedJob) async throws {
        let stored = claimed.push
        let now = clock.now
        if DeliveryPlan.isExpired(push.expiresAt.map(EpochClock.Instant.init(epochMilliseconds:)), at: now) {
            var result = BatchResult()
            result.expired = job.deviceIDs.count
            try await store.pushes.complete(job, result)
            telemetry.batchFinished(job, applicationID: stored.applicationID, result: result, time: now.epochMilliseconds)
            return
        }
        if claimed.throttled {
            // A throttled push whose previous batch started less than a second ago (in this
            // process or another): this one waits its turn.
            let notBefore = try await store.pushes.takeSendSlot(pushID: stored.id).map(EpochClock.Instant.init(epochMilliseconds:))
            if let turn = DeliveryPlan.turn(throttled: true, notBefore: notBefore) {
                try await store.pushes.release(job, availableAt: turn.epochMilliseconds)
                return
            }
        }
        let targets = try await store.pushes.targets(job.deviceIDs, quietTime: push.quietTime != .ignore)
        var ends: [Int64: EpochClock.Instant] = [:]
        if push.quietTime != .ignore {
            let settings = try await store.deliverySettings.find(applicationID: stored.applicationID)
            ends = DeliveryPlan.quietTimeEnds(targets, settings: settings, now: now)
        }
        let audience = DeliveryPlan.audience(jobDevices: job.deviceIDs.count, targets: targets, policy: push.quietTime, ends: ends)
        // The iOS badge count Herald keeps: a relative badge counts each device once per push
        // (also when this batch is a retry or a redelivery), a number sets it.
        var badges: [Int64: Int64]?
        switch push.badge {
        case nil: break
        case .add(let delta)?: badges = try await store.pushes.badges(for: job, adding: delta, deviceIDs: audience.badgeDevices)
        case .set(let value)?: try await store.pushes.setBadges(value, deviceIDs: audience.badgeDevices)
        }
        var senders: [UUID: PlatformSender] = [:]
        var credentials: [UUID: DeliveryPlan.Credentials] = [:]
        for target in audience.sending where credentials[target.platformID] == nil {
            switch try await self.senders.lookup(target.platformID) {
            case .missing: credentials[target.platformID] = .missing
            case .failing: credentials[target.platformID] = .failing
            case .ready(let sender):
                credentials[target.platformID] = .ready
                senders[target.platformID] = sender
            }
        }
        let rules = DeliveryRules(configuration)
        let plan: DeliveryPlan
        do {
            // The app may have turned receipts off since the push was accepted: read with each claim.
            plan = try DeliveryPlan(
                push: push, receiptID: claimed.includesReceiptID ? stored.id.lowercasedString : nil, attempt: job.attempt,
                pushCreatedAt: EpochClock.Instant(epochMilliseconds: stored.createdAt), audience: audience, badges: badges,
                credentials: credentials, rules: rules,
                retryDelay: DeliveryPlan.backoff(attempt: job.attempt, first: configuration.firstRetryDelay, jitter: .random(in: 0...1)),
                now: now)
        } catch {
            try await failUndeliverable(job, stored, error)
            return
        }
        for problem in plan.problems {
            if let reason = problem.failed {
                telemetry.metrics.recordUnsent(
                    provider: DeliveryMetrics.provider(for: problem.type), reason: reason, count: problem.devices)
            }
            telemetry.credentialsProblem(
                platformID: problem.platformID, type: problem.type, applicationID: stored.applicationID, devices: problem.devices,
                message: problem.message, time: now.epochMilliseconds)
        }

        var fold = plan.fold
        // The devices to send, in the order they are sent: the job keeps those not yet sent.
        let order = plan.sends.flatMap { $0.devices.map(\.id) }
        var done = 0
        var sinceRecorded = 0
        for group in plan.sends {
            guard let sender = senders[group.platformID] else { continue }
            for round in DeliveryPlan.rounds(of: group.devices.count, probing: !sender.accepting, rules: rules) {
                let devices = Array(group.devices[round])
                done += devices.count
                if fold.holdIfRefused(group.platformID, devices.map(\.id), at: clock.now) { continue }
                if Task.isShuttingDownGracefully {
                    fold.released(devices.map(\.id))
                    continue
                }
                let answered = await deliver(
                    group, devices, with: sender, pushID: stored.id, applicationID: stored.applicationID, into: &fold)
                fold.refused(group.platformID, answered)
                if answered.refusedCredentials {
                    try await refusedCredentials(group, paused: answered.pausePlatform, applicationID: stored.applicationID)
                }
                sinceRecorded += devices.count
                if sinceRecorded >= rules.progressEvery, done < order.count {
                    try await store.pushes.recordProgress(job, fold.take(), remaining: Array(order[done...]))
                    sinceRecorded = 0
                }
            }
        }
        let result = fold.take()
        if !result.released.isEmpty {
            logger.info(
                "shutting down: the devices not yet sent go back to the queue",
                metadata: ["push": "\(stored.id)", "devices": "\(result.released.count)"])
        }
        try await store.pushes.complete(job, result)
        telemetry.batchFinished(job, applicationID: stored.applicationID, result: fold.recorded, time: clock.now.epochMilliseconds)
    }

    /// Sends one round to a group's `devices` and folds the answers into `fold`: a request that
    /// failed below HTTP is sent again at once, up to `immediateResends` times.
    private func deliver(
        _ group: DeliveryPlan.SendGroup, _ devices: [DeliveryTarget], with sender: PlatformSender, pushID: UUID, applicationID: UUID,
        into fold: inout BatchFold
    ) async -> BatchFold.Answered {
        var answered = BatchFold.Answered()
        let delivered = fold.result.delivered + fold.recorded.delivered
        var pending = devices
        for round in 0...Self.immediateResends {
            let sent = await sender.send(group.content, to: pending)
            let arrived = clock.now
            telemetry.recordRound(provider: sender.provider, sent)
            log(sent, of: pending, platformID: group.platformID)
            let this = fold.answered(pending, sent, round: round, stopping: Task.isShuttingDownGracefully, at: arrived)
            answered.absorb(this)
            pending = this.resend
            if pending.isEmpty { break }
        }
        if let cause = answered.cause, answered.unreached > 0 {
            // Not only in the process's log: the app's activity log says why its devices wait.
            logger.warning(
                "a provider could not be reached; its devices are retried",
                metadata: [
                    "platform": "\(group.platformID)", "devices": "\(answered.unreached)", "error": "\(telemetry.loggableReason(cause))",
                ])
            telemetry.providerUnreachable(
                pushID: pushID, platformID: group.platformID, type: group.type, applicationID: applicationID, devices: answered.unreached,
                cause: cause, time: clock.now.epochMilliseconds)
        }
        if !sender.accepting, fold.result.delivered + fold.recorded.delivered > delivered { await senders.accepted(group.platformID) }
        return answered
    }

    /// The provider refused a platform's credentials: a final refusal pauses the platform.
    private func refusedCredentials(_ group: DeliveryPlan.SendGroup, paused: Bool, applicationID: UUID) async throws {
        guard paused else {
            logger.warning(
                "the provider refused the platform's provider token; the batch's other devices are tried again later",
                metadata: ["platform": "\(group.platformID)"])
            return
        }
        // The provider client has spent its own remedies (a fresh token) before it says so.
        logger.warning(
            "the provider rejected the platform's credentials; its sends are paused", metadata: ["platform": "\(group.platformID)"])
        telemetry.credentialsProblem(
            platformID: group.platformID, type: group.type, applicationID: applicationID, devices: group.devices.count,
            message: "the provider refused the platform's credentials: its sends are paused", time: clock.now.epochMilliseconds)
        try await store.platforms.setCredentialsStatus(id: group.platformID, .failing)
        await senders.reset(group.platformID)
    }

    /// `DeliveryPlan.backoff` with a random jitter.
    static func backoff(attempt: Int, first: Duration = .seconds(1)) -> Duration {
        DeliveryPlan.backoff(attempt: attempt, first: first, jitter: .random(in: 0...1))
    }

    /// The debug lines of a round's answers that need more than a count.
    private func log(_ outcomes: [DeliveryOutcome], of devices: [DeliveryTarget], platformID: UUID) {
        guard logger.logLevel <= .debug else { return }
        for (device, outcome) in zip(devices, outcomes) {
            switch outcome {
            case .gone:
                logger.debug(
                    "the provider says the device token is gone; the device is deactivated",
                    metadata: ["platform": "\(platformID)", "token": "\(telemetry.logSensitivity.loggable(device.token))"])
            case .failed(let reason):
                logger.debug(
                    "a notification failed for good",
                    metadata: [
                        "reason": "\(telemetry.loggableReason(reason))", "token": "\(telemetry.logSensitivity.loggable(device.token))",
                    ])
            case .unanswered(let reason):
                logger.debug("a request got no answer", metadata: ["error": "\(telemetry.loggableReason(reason))"])
            case .delivered, .retry, .credentialsRejected, .notAttempted:
                break
            }
        }
    }
}
