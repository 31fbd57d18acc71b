import HeraldAPNs
import HeraldCore
import HeraldStore
import Logging
import ServiceLifecycle
import struct Foundation.Data
import struct Foundation.UUID
import class Foundation.JSONDecoder

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
    let senders: APNsSenders
    let now: @Sendable () -> Int64
    let logger: Logger

    func process(_ job: PushJob, _ stored: StoredPush) async throws {
        let push: Push
        do {
            let input = try JSONDecoder().decode(PushInput.self, from: Data(stored.request.utf8))
            push = try input.validated(now: stored.createdAt)
        } catch {
            // Accepted pushes were valid; one that no longer decodes is failed, not retried forever.
            logger.error("stored push does not validate", metadata: ["push": "\(stored.id)", "error": "\(error)"])
            var result = BatchResult()
            result.failed["InvalidStoredPush"] = job.deviceIDs.count
            try await store.pushes.complete(job, result)
            return
        }
        switch job.kind {
        case .fanout: try await fanOut(job, push, stored)
        case .batch: try await send(job, push, stored)
        }
    }

    // MARK: Fan-out

    private func fanOut(_ job: PushJob, _ push: Push, _ stored: StoredPush) async throws {
        var job = job
        while true {
            let page = try await store.pushes.audience(
                of: push, applicationID: stored.applicationID, after: job.cursor, limit: configuration.batchSize)
            let finished = page.count < configuration.batchSize
            try await store.pushes.advance(job, page: page, finished: finished)
            if finished { return }
            job.cursor = page.last ?? job.cursor
            if Task.isShuttingDownGracefully {
                // The cursor is saved: the next worker (here or in another process) goes on from it.
                try await store.pushes.release(job, availableAt: now())
                return
            }
        }
    }

    // MARK: Sending

    private func send(_ job: PushJob, _ push: Push, _ stored: StoredPush) async throws {
        var result = BatchResult()
        let time = now()
        if let expiresAt = push.expiresAt, expiresAt <= time {
            result.expired = job.deviceIDs.count
            try await store.pushes.complete(job, result)
            return
        }
        let targets = try await store.pushes.targets(job.deviceIDs)
        result.skipped = job.deviceIDs.count - targets.count

        let notification = try APNsRenderer.render(push, receiptID: stored.id.uuidString.lowercased())
        var byPlatform: [UUID: [DeliveryTarget]] = [:]
        for target in targets {
            if target.platformType == .ios, notification != nil {
                byPlatform[target.platformID, default: []].append(target)
            } else {
                // Nothing for this device yet: FCM, Web Push and WNS come with their providers.
                result.skipped += 1
            }
        }
        var held: [Int64] = []
        if let notification {
            for (platformID, devices) in byPlatform {
                switch try await senders.lookup(platformID, now: time / 1000) {
                case .missing:
                    result.failed["CredentialsMissing", default: 0] += devices.count
                case .failing:
                    if job.attempt + 1 >= configuration.maximumAttempts {
                        result.failed["CredentialsFailing", default: 0] += devices.count
                    } else {
                        held += devices.map(\.id)
                    }
                case .ready(let client, let topic, let bearer):
                    result.released += try await deliver(
                        notification, to: devices, client: client, topic: topic, bearer: bearer, platformID: platformID,
                        attempt: job.attempt, into: &result)
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
            result.retry += held
            result.retryAt = time + (held.isEmpty ? Self.backoff(attempt: job.attempt) : 60_000)
        }
        try await store.pushes.complete(job, result)
    }

    /// Sends to `devices` and folds the outcomes into `result`; returns the devices it did not
    /// send because the process is shutting down.
    private func deliver(
        _ notification: APNsNotification, to devices: [DeliveryTarget], client: APNsClient, topic: String, bearer: String?,
        platformID: UUID, attempt: Int, into result: inout BatchResult
    ) async throws -> [Int64] {
        var outcomes: [(DeliveryTarget, Result<APNsOutcome, any Error>)] = []
        var released: [Int64] = []
        var pending = devices
        for round in 0...Self.immediateResends {
            let (answered, unsent) = await sendAll(notification, to: pending, client: client, topic: topic, bearer: bearer)
            released += unsent.map(\.id)
            pending = []
            for (device, outcome) in answered {
                guard case .failure(let error) = outcome, round < Self.immediateResends else {
                    outcomes.append((device, outcome))
                    continue
                }
                logger.debug("APNs request failed; sending again", metadata: ["error": "\(error)"])
                if Task.isShuttingDownGracefully {
                    released.append(device.id)
                } else {
                    pending.append(device)
                }
            }
            if pending.isEmpty { break }
        }
        let lastAttempt = attempt + 1 >= configuration.maximumAttempts
        var credentialsRejected = false
        for (device, outcome) in outcomes {
            switch outcome {
            case .success(.accepted):
                result.delivered += 1
            case .success(.rejected(_, let reason, let timestamp)):
                if reason.meansDeviceGone {
                    result.gone[device.id] = timestamp
                } else if reason.meansCredentialsRejected {
                    credentialsRejected = true
                    if lastAttempt { result.failed["\(reason)", default: 0] += 1 } else { result.retry.append(device.id) }
                } else if reason.isRetryable && !lastAttempt {
                    result.retry.append(device.id)
                } else {
                    result.failed["\(reason)", default: 0] += 1
                }
            case .failure(let error):
                logger.debug("APNs request failed", metadata: ["error": "\(error)"])
                if lastAttempt { result.failed["ConnectionError", default: 0] += 1 } else { result.retry.append(device.id) }
            }
        }
        if credentialsRejected {
            if await senders.rejected(platformID, now: now() / 1000) == .markFailing {
                logger.warning("APNs rejected the platform's credentials; its sends are paused", metadata: ["platform": "\(platformID)"])
                try await store.platforms.setCredentialsStatus(id: platformID, .failing)
                await senders.reset(platformID)
            }
        } else if result.delivered > 0 {
            await senders.accepted(platformID)
        }
        return released
    }

    /// Sends to each device with bounded concurrency. Once the process is shutting down no new
    /// send starts; those in flight are awaited. Returns the outcomes and the devices not sent.
    private func sendAll(
        _ notification: APNsNotification, to devices: [DeliveryTarget], client: APNsClient, topic: String, bearer: String?
    ) async -> (answered: [(DeliveryTarget, Result<APNsOutcome, any Error>)], unsent: [DeliveryTarget]) {
        await withTaskGroup(of: (DeliveryTarget, Result<APNsOutcome, any Error>).self) { group in
            var answered: [(DeliveryTarget, Result<APNsOutcome, any Error>)] = []
            var next = devices.startIndex
            func addNext() -> Bool {
                guard next < devices.endIndex, !Task.isShuttingDownGracefully else { return false }
                let device = devices[next]
                next += 1
                group.addTask {
                    do {
                        return (device, .success(try await client.send(notification, deviceToken: device.token, topic: topic, bearer: bearer)))
                    } catch {
                        return (device, .failure(error))
                    }
                }
                return true
            }
            for _ in 0..<max(1, configuration.sendConcurrency) where addNext() {}
            for await outcome in group {
                answered.append(outcome)
                _ = addNext()
            }
            return (answered, Array(devices[next...]))
        }
    }

    /// Exponential backoff with jitter: about 1 s, 2 s, 4 s … at most 5 minutes (ms).
    static func backoff(attempt: Int) -> Int64 {
        let base = min(300_000, 1000 * (Int64(1) << min(attempt, 20)))
        return base / 2 + Int64.random(in: 0...(base / 2))
    }
}
