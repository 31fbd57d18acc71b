import HeraldCore

import struct Foundation.UUID

/// A push as stored: the accepted request and its delivery counters.
package struct StoredPush: Sendable, Equatable {
    package var id: UUID
    package var applicationID: UUID
    /// The push as stored: an `AcceptedPush`, or an older Herald's request text; read it with
    /// `accepted()`.
    package var request: String
    /// `queued`, `sending` or `done`.
    package var status: String
    package var createdAt: Int64
    package var expiresAt: Int64?
    package var targeted: Int
    package var delivered: Int
    package var failed: Int
    package var invalidTokens: Int
    package var expired: Int
    /// Devices of platforms Herald cannot deliver to yet.
    package var skipped: Int
    /// Failures by provider reason.
    package var failures: [String: Int]
    /// The latest reason a provider could not be reached for its devices, and when (epoch ms).
    package var lastError: String? = nil
    package var lastErrorAt: Int64? = nil

    /// Targeted devices without an outcome yet.
    package var pending: Int { max(0, targeted - delivered - failed - invalidTokens - expired - skipped) }

    /// The validated push, decoded (an older Herald's row is checked as when it was accepted).
    package func accepted() throws(StoredPushError) -> AcceptedPush {
        try AcceptedPush(stored: request, acceptedAt: createdAt)
    }
}

/// One unit of delivery work: a fan-out over the audience, or a batch of devices to send to.
package struct PushJob: Sendable, Equatable {
    package enum Kind: String, Sendable {
        case fanout
        case batch
    }

    package var id: Int64
    package var pushID: UUID
    package var kind: Kind
    /// Fan-out: the last device id already turned into batches.
    package var cursor: Int64
    /// Batch: the devices to send to.
    package var deviceIDs: [Int64]
    /// Batch: how many times these devices were tried already.
    package var attempt: Int
    /// Which claim of the job this is: the store refuses a renewal, an advance, a completion or
    /// a release from an earlier one (its worker stalled past its lease and another took over).
    package var claim: Int64
    /// Fan-out: the zones it is limited to ('' for devices without one), for one group of a
    /// local-time occurrence; nil: the push's own zones (`timeZones(of:)`).
    package var timeZones: [String]? = nil
}

/// A job a worker has claimed, with what sending it needs to know of its push, read with it.
package struct ClaimedJob: Sendable {
    package var job: PushJob
    package var push: StoredPush
    /// Whether the app puts the receipt id in its notifications (read with each claim: the app
    /// may turn receipts off while its push is being sent).
    package var includesReceiptID: Bool
    /// Whether the push has a send gate (it is throttled; see `PushRepository.takeSendSlot`).
    package var throttled: Bool
}

/// A device as the sender needs it.
package struct DeliveryTarget: Sendable, Equatable {
    package var id: Int64
    package var platformID: UUID
    package var platformType: PlatformType
    package var token: String
    /// Read only for a push whose quiet time is not `ignore` (`targets(_:quietTime:)`): the
    /// device's own zone and quiet time, nil where it has none.
    package var timeZone: String? = nil
    package var quietTime: QuietTime? = nil

    package init(
        id: Int64, platformID: UUID, platformType: PlatformType, token: String, timeZone: String? = nil, quietTime: QuietTime? = nil
    ) {
        self.id = id
        self.platformID = platformID
        self.platformType = platformType
        self.token = token
        self.timeZone = timeZone
        self.quietTime = quietTime
    }
}

/// What a batch came to, applied in one transaction.
package struct BatchResult: Sendable, Equatable {
    package var delivered = 0
    package var expired = 0
    package var skipped = 0
    /// Failed for good, by reason.
    package var failed: [String: Int] = [:]
    /// Dead tokens: device id → when the provider says it died (epoch ms), if it said.
    package var gone: [Int64: Int64?] = [:]
    /// Dead tokens: device id → the provider's reason (`Unregistered`, …), for `device.deactivated`.
    package var goneReasons: [Int64: String] = [:]
    /// To try again later, at the next attempt: when (epoch ms) → the devices due then, each
    /// group a batch job of its own, so each device waits as long as its own answer asked.
    package var retries: [Int64: [Int64]] = [:]
    /// Not sent at all (the worker is stopping): due again at once, at the same attempt.
    package var released: [Int64] = []
    /// In their quiet time (`"quiet_time": "hold"`): when it ends (epoch ms) → the devices, each
    /// group a new batch due then, at the same attempt, shown on the receipt.
    package var held: [Int64: [Int64]] = [:]
    /// The latest reason a provider could not be reached for the batch's devices (they wait for
    /// their retries), shown on the push's status.
    package var lastError: String?

    package init() {}
}

/// One page of a fan-out: the devices to send to, and how far the audience was read.
package struct AudiencePage: Sendable, Equatable {
    package var deviceIDs: [Int64]
    /// The last device read (whether or not it is sent to).
    package var cursor: Int64
    /// Nothing is left after this page.
    package var exhausted: Bool
}

/// Pushes and the job queue that delivers them.
package struct PushRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock
    /// Announced after each commit that adds a job, due now or later (`WorkKind.deliveryJobs`).
    let work: WorkSignals

    private static let pushColumnNames = [
        "id", "app_id", "request", "status", "created_at", "expires_at", "targeted", "delivered", "failed", "invalid_tokens", "expired",
        "skipped", "last_error", "last_error_at",
    ]
    private static let pushColumns = pushColumnNames.joined(separator: ", ")
    private static let jobColumns = "id, push_id, kind, cursor, device_ids, attempt, claim, time_zones"
    /// For a query over `pushes p LEFT JOIN applications a`: the push's columns prefixed `p_`,
    /// its app's receipt setting and whether it has a send gate.
    private static let claimedPushColumns =
        pushColumnNames.map { "p.\($0) AS p_\($0)" }.joined(separator: ", ")
        + ", a.include_receipt_id AS p_include_receipt_id, EXISTS (SELECT 1 FROM push_rates r WHERE r.push_id = p.id) AS p_throttled"

    /// Stores a push with its fan-out job; when this returns the push is durable.
    package func create(applicationID: UUID, _ accepted: AcceptedPush, availableAt: Int64? = nil) async throws -> UUID {
        let id = UUID.timeOrdered(milliseconds: clock.now.epochMilliseconds)
        let time = clock.now.epochMilliseconds
        let request = accepted.storedText
        try await database.transaction { connection in
            try await Self.insert(
                connection, id: id, applicationID: applicationID, request: request, expiresAt: accepted.push.expiresAt,
                availableAt: availableAt ?? time, time: time)
        }
        // Even a job due later: the sleeping workers then wake for it rather than at their old deadline.
        await work.announce(.deliveryJobs)
        return id
    }

    /// The push with its counters, if it belongs to `applicationID`.
    package func find(id: UUID, applicationID: UUID) async throws -> StoredPush? {
        let rows = try await database.query(
            "SELECT \(unsafeRaw: Self.pushColumns) FROM pushes WHERE id = \(id) AND app_id = \(applicationID)")
        guard var push = try rows.first.map({ try Self.push($0) }) else { return nil }
        for row in try await database.query("SELECT reason, count FROM push_failures WHERE push_id = \(id)") {
            push.failures[try row.string("reason")] = Int(try row.int("count"))
        }
        return push
    }

    /// The application's newest pushes, newest first, with their counters (without failure
    /// reasons; `find` has those). Served by the `pushes_app` index.
    package func recent(applicationID: UUID, limit: Int) async throws -> [StoredPush] {
        try await database.query(
            """
            SELECT \(unsafeRaw: Self.pushColumns) FROM pushes WHERE app_id = \(applicationID)
            ORDER BY created_at DESC, id DESC LIMIT \(limit)
            """
        ).map { try Self.push($0) }
    }

    /// Takes the next due job for `lease` milliseconds: a ready job, or one whose worker's lease
    /// ran out (it crashed). PostgreSQL lets concurrent workers skip each other's rows.
    ///
    /// The push comes with its app's receipt setting and whether it is throttled, read in the
    /// same statement on PostgreSQL (one round trip per job rather than four).
    package func claim(lease: Int64) async throws -> ClaimedJob? {
        let time = clock.now.epochMilliseconds
        let lock = database.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        let update: SQL = """
            UPDATE push_jobs SET state = 'claimed', lease_until = \(time + lease), claim = claim + 1
            WHERE id = (
                SELECT id FROM push_jobs
                WHERE (state = 'ready' AND available_at <= \(time)) OR (state = 'claimed' AND lease_until < \(time))
                ORDER BY id LIMIT 1\(unsafeRaw: lock))
            RETURNING \(unsafeRaw: Self.jobColumns)
            """
        let job: PushJob
        let pushRow: SQLRow?
        switch database.dialect {
        case .postgres:
            let rows = try await database.query(
                """
                WITH claimed AS (\(update))
                SELECT c.*, \(unsafeRaw: Self.claimedPushColumns)
                FROM claimed c LEFT JOIN pushes p ON p.id = c.push_id LEFT JOIN applications a ON a.id = p.app_id
                """)
            guard let row = rows.first else { return nil }
            job = try Self.job(row)
            pushRow = row
        case .sqlite:
            // SQLite has no data-modifying CTEs; its statements cost no round trip anyway.
            guard let row = try await database.query(update).first else { return nil }
            job = try Self.job(row)
            pushRow = try await database.query(
                """
                SELECT \(unsafeRaw: Self.claimedPushColumns)
                FROM pushes p LEFT JOIN applications a ON a.id = p.app_id WHERE p.id = \(job.pushID)
                """
            ).first
        }
        guard let pushRow, case .text = pushRow["p_id"] else {
            throw StoreError(reason: .unknown("job"), message: "job \(job.id) has no push")
        }
        return ClaimedJob(
            job: job, push: try Self.push(pushRow, prefix: "p_"),
            includesReceiptID: try pushRow.optionalInt("p_include_receipt_id").map { $0 != 0 } ?? true,
            throttled: try pushRow.bool("p_throttled"))
    }

    /// When a job is next due (epoch ms), if any is open: the earliest ready job's due time, or
    /// the earliest claimed job's lease end (after which it is taken again). A sleeping worker
    /// wakes then. It may be now or past: a job another worker is claiming at the same moment.
    /// Served by the `push_jobs_due` index (state, available_at).
    package func nextDue() async throws -> Int64? {
        let row = try await database.query(
            """
            SELECT (SELECT MIN(available_at) FROM push_jobs WHERE state = 'ready') AS ready,
                (SELECT MIN(lease_until) FROM push_jobs WHERE state = 'claimed') AS leased
            """
        ).first
        let ready = try row?.optionalInt("ready")
        // A lease is claimable once it is past (`lease_until < now`), a millisecond after it ends.
        let leased = try row?.optionalInt("leased").map { $0 + 1 }
        return [ready, leased].compactMap { $0 }.min()
    }

    /// Extends a claimed job's lease; throws `leaseLost` if another worker has claimed it since.
    package func renew(_ job: PushJob, lease: Int64) async throws {
        let rows = try await database.query(
            "UPDATE push_jobs SET lease_until = \(clock.now.epochMilliseconds + lease) WHERE \(Self.held(job)) RETURNING id")
        if rows.isEmpty { throw Self.leaseLost(job) }
    }

    /// The next page of the audience after `cursor`, in device id order (each device once).
    package func audience(of push: Push, applicationID: UUID, after cursor: Int64, limit: Int) async throws -> [Int64] {
        try await audiencePage(of: push, applicationID: applicationID, after: cursor, limit: limit).deviceIDs
    }

    /// The next `limit` devices after `cursor` that the push's targets select, in device id
    /// order, and of those the ones it goes to (`interactive-only` leaves out the devices that
    /// cannot show interactive notifications): the fan-out moves its cursor past what was read.
    ///
    /// - Parameter timeZones: a local-time slot's zones (`timeZones(of:)`), which limit the
    ///   audience to the devices in them; empty for any other push.
    package func audiencePage(
        of push: Push, applicationID: UUID, after cursor: Int64, limit: Int, timeZones zones: [String] = []
    ) async throws -> AudiencePage {
        var condition: SQL = "d.app_id = \(applicationID) AND d.active = 1 AND d.id > \(cursor)"
        // The zones come bound as a list: folded into the page query as subqueries on
        // push_time_zones, they cost PostgreSQL a plan that read far more than the page
        // (40–90 ms a page, not 1).
        if !zones.isEmpty {
            condition.append(" AND COALESCE(d.time_zone, '') IN (\(list: zones))")
        }
        var interactiveOnly = false
        // `target.audience`, compiled at each page (its topics may expire during the fan-out).
        let filter = try await audienceCondition(of: push, applicationID: applicationID, time: clock.now.epochMilliseconds)
        switch push.audience {
        case .devices(let ids):
            condition.append(" AND d.uuid IN (\(list: ids))")
        case .selection(let platforms, let topics, let customUserIDs, let interactive):
            if !topics.isEmpty {
                // Read from each live topic's subscriptions rather than from every device.
                return try await subscriberPage(
                    applicationID: applicationID, platforms: platforms, topics: topics, customUserIDs: customUserIDs,
                    interactiveOnly: interactive, timeZones: zones, filter: filter?.sql, after: cursor, limit: limit)
            }
            interactiveOnly = interactive
            if let platforms {
                condition.append(" AND d.platform_type IN (\(list: platforms.map(\.rawValue).sorted()))")
            }
            if !customUserIDs.isEmpty {
                condition.append(" AND d.custom_user_id IN (\(list: customUserIDs))")
            }
        }
        if let filter {
            if case .devices = push.audience {
                condition.append(" AND \(filter.sql)")
            } else {
                return try await windowPage(condition, filter: filter.sql, interactiveOnly: interactiveOnly, after: cursor, limit: limit)
            }
        }
        guard interactiveOnly else {
            // Every other page is ids alone, read as one row: their count, the last, and the ids
            // joined as a job stores them. A row for each id costs the database and Herald more
            // than the ids themselves (docs/decisions/0006-joined-rows-fanout.md).
            let row = try await database.query(
                """
                SELECT COUNT(*) AS n, MAX(id) AS last, \(unsafeRaw: Self.joinedIDs(database.dialect)) AS ids
                FROM (SELECT d.id FROM devices d WHERE \(condition) ORDER BY d.id LIMIT \(limit)) page
                """
            ).first
            let count = try row?.int("n") ?? 0
            // Joined in the order the database read them (nearly always the page's), sorted here:
            // an ordered aggregate would sort them again inside PostgreSQL, a large share of the
            // page statement's time (`EXPLAIN ANALYZE`).
            var ids = Self.deviceIDs(try row?.optionalString("ids") ?? "")
            ids.sort()
            return AudiencePage(deviceIDs: ids, cursor: try row?.optionalInt("last") ?? cursor, exhausted: count < limit)
        }
        // An interactive-only push reads what decides it.
        let rows = try await database.query(
            "SELECT d.id, d.platform_type, d.os_version FROM devices d WHERE \(condition) ORDER BY d.id LIMIT \(limit)")
        var page = AudiencePage(deviceIDs: [], cursor: cursor, exhausted: rows.count < limit)
        page.deviceIDs.reserveCapacity(rows.count)
        for row in rows {
            let id = try row.int("id")
            page.cursor = id
            guard let type = PlatformType(rawValue: try row.string("platform_type")),
                InteractivePush.isSupported(by: type, osVersion: try row.optionalString("os_version"))
            else { continue }
            page.deviceIDs.append(id)
        }
        return page
    }

    /// The zones a local-time slot's push is for ('' for devices without one); empty for any
    /// other push.
    package func timeZones(of pushID: UUID) async throws -> [String] {
        try await database.query("SELECT time_zone FROM push_time_zones WHERE push_id = \(pushID) ORDER BY time_zone")
            .map { try $0.string("time_zone") }
    }

    /// Turns one audience page into a batch job and moves the fan-out past it, atomically: a
    /// crash before this commits repeats the page, never skips or doubles it.
    ///
    /// - Parameter cursor: the last device read (by default the page's last): past it next time.
    /// - Parameter ratePerSecond: a throttled push (pages of at most the rate): the batch becomes
    ///   claimable a second after the push's latest batch, and the push gets its send gate (see
    ///   `takeSendSlot`), so that whichever worker or process claims them, no more than the rate
    ///   start sending in any second.
    package func advance(
        _ fanout: PushJob, page: [Int64], through cursor: Int64? = nil, finished: Bool, ratePerSecond: Int? = nil
    ) async throws {
        let time = clock.now.epochMilliseconds
        let through = cursor ?? page.last ?? fanout.cursor
        if database.dialect == .postgres, !page.isEmpty, !finished, ratePerSecond == nil {
            // The common page, in one statement (so one implicit transaction and one round trip
            // instead of five): the fan-out moves on, its batch is queued and counted, and the
            // other processes are notified of it (the EXISTS makes PostgreSQL evaluate the call).
            let moved = try await database.query(
                """
                WITH moved AS (\(Self.move(fanout, to: "claimed", through: through))
                ), queued AS (\(Self.enqueueStatement(
                    pushID: fanout.pushID, kind: .batch, deviceIDs: page, attempt: 0, availableAt: time, time: time, onlyIf: "moved"))
                ), counted AS (\(Self.count(page.count, pushID: fanout.pushID, onlyIf: "moved"))
                ), notified AS (SELECT \(work.notification(.deliveryJobs)) FROM moved
                )
                SELECT id FROM moved WHERE EXISTS (SELECT 1 FROM notified)
                """)
            if moved.isEmpty { throw Self.leaseLost(fanout) }
            work.ringHere(.deliveryJobs)
            return
        }
        let (queued, events) = try await database.transaction { connection -> (Bool, Bool) in
            let moved = try await connection.query(Self.move(fanout, to: finished ? "done" : "claimed", through: through))
            if moved.isEmpty { throw Self.leaseLost(fanout) }
            if !page.isEmpty {
                var availableAt = time
                if let ratePerSecond {
                    try await Self.throttle(connection, pushID: fanout.pushID, perSecond: ratePerSecond)
                    // A batch held for its devices' quiet time is due when that ends: it must not
                    // push the pages still to come past it.
                    let latest = try await connection.query(
                        "SELECT MAX(available_at) AS latest FROM push_jobs WHERE push_id = \(fanout.pushID) AND kind = 'batch' AND quiet = 0"
                    )
                    if let latest = try latest.first?.optionalInt("latest") { availableAt = max(time, latest + 1000) }
                }
                try await Self.enqueue(
                    connection, pushID: fanout.pushID, kind: .batch, deviceIDs: page, attempt: 0, availableAt: availableAt, time: time)
                try await connection.query(Self.count(page.count, pushID: fanout.pushID))
            }
            let events = finished ? try await Self.closeIfFinished(connection, pushID: fanout.pushID, time: time) : false
            return (!page.isEmpty, events)
        }
        // A throttled batch is due later; the sleepers wake for it all the same.
        if queued { await work.announce(.deliveryJobs) }
        if events { await work.announce(.webhookEvents) }
    }

    /// Moves a held fan-out's cursor (and sets its state); returns its id, or nothing if the
    /// lease was lost.
    static func move(_ fanout: PushJob, to state: String, through cursor: Int64) -> SQL {
        "UPDATE push_jobs SET state = \(state), cursor = \(cursor) WHERE \(held(fanout)) RETURNING id"
    }

    /// Counts a page's devices as targeted by its push; with `onlyIf`, only if that CTE has a row.
    static func count(_ devices: Int, pushID: UUID, onlyIf source: String? = nil) -> SQL {
        var statement: SQL = "UPDATE pushes SET targeted = targeted + \(devices), status = 'sending' WHERE id = \(pushID)"
        if let source { statement.append(" AND EXISTS (SELECT 1 FROM \(unsafeRaw: source))") }
        return statement
    }

    /// Records a batch's outcomes and closes it, in one transaction: counters, failures, dead
    /// tokens (unless the device registered again after the provider's timestamp), a new batch
    /// job for each group of devices to be retried, and one for what was released unsent. Throws
    /// `leaseLost`, recording nothing, if another worker has claimed the job since.
    package func complete(_ job: PushJob, _ result: BatchResult) async throws {
        try await record(job, result, remaining: nil)
    }

    /// Records the outcomes of part of a claimed batch as `complete` does, and keeps the job,
    /// claimed, with only the devices in `remaining` (those not yet sent): a worker that dies
    /// after this resends only those. Throws `leaseLost`, recording nothing, if another worker
    /// has claimed the job since.
    package func recordProgress(_ job: PushJob, _ result: BatchResult, remaining: [Int64]) async throws {
        try await record(job, result, remaining: remaining)
    }

    /// `complete` (`remaining` nil) or `recordProgress`.
    private func record(_ job: PushJob, _ result: BatchResult, remaining: [Int64]?) async throws {
        let time = clock.now.epochMilliseconds
        let events = try await database.transaction { connection -> Bool in
            var events = false
            let closing: SQL
            if let remaining {
                closing =
                    "UPDATE push_jobs SET device_ids = \(remaining.map(String.init).joined(separator: ",")) WHERE \(Self.held(job)) RETURNING id"
            } else {
                closing = "UPDATE push_jobs SET state = 'done' WHERE \(Self.held(job)) RETURNING id"
            }
            let closed = try await connection.query(closing)
            if closed.isEmpty { throw Self.leaseLost(job) }
            let failed = result.failed.values.reduce(0, +)
            if let lastError = result.lastError {
                try await connection.query(
                    "UPDATE pushes SET last_error = \(String(lastError.prefix(500))), last_error_at = \(time) WHERE id = \(job.pushID)")
            }
            if result.delivered + failed + result.gone.count + result.expired + result.skipped > 0 {
                try await connection.query(
                    """
                    UPDATE pushes SET delivered = delivered + \(result.delivered), failed = failed + \(failed),
                        invalid_tokens = invalid_tokens + \(result.gone.count), expired = expired + \(result.expired),
                        skipped = skipped + \(result.skipped)
                    WHERE id = \(job.pushID)
                    """)
            }
            for (reason, count) in result.failed.sorted(by: { $0.key < $1.key }) {
                try await connection.query(
                    """
                    INSERT INTO push_failures (push_id, reason, count) VALUES (\(job.pushID), \(reason), \(count))
                    ON CONFLICT (push_id, reason) DO UPDATE SET count = push_failures.count + excluded.count
                    """)
            }
            // Whether the app wants `device.deactivated`: asked once per batch (its devices are all
            // the push's app's), at the first device deactivated.
            var deactivationWanted: Bool?
            for (deviceID, timestamp) in result.gone.sorted(by: { $0.key < $1.key }) {
                // A device that registered again after the token died has a new, live token.
                let deactivated = try await connection.query(
                    """
                    UPDATE devices SET active = 0 WHERE id = \(deviceID) AND active = 1 AND updated_at <= \(timestamp ?? time)
                    RETURNING uuid, app_id, token
                    """)
                guard let device = deactivated.first else { continue }
                if deactivationWanted == nil {
                    deactivationWanted = try await WebhookRepository.wanted(
                        connection, applicationID: try device.uuid("app_id"), type: .deviceDeactivated)
                }
                if deactivationWanted == true {
                    let queued = try await Self.deviceDeactivated(
                        connection, device, reason: result.goneReasons[deviceID] ?? "Unregistered", providerTime: timestamp, time: time)
                    events = events || queued
                }
            }
            for (due, devices) in result.retries.sorted(by: { $0.key < $1.key }) where !devices.isEmpty {
                try await Self.enqueue(
                    connection, pushID: job.pushID, kind: .batch, deviceIDs: devices, attempt: job.attempt + 1, availableAt: due, time: time
                )
            }
            if !result.released.isEmpty {
                try await Self.enqueue(
                    connection, pushID: job.pushID, kind: .batch, deviceIDs: result.released, attempt: job.attempt,
                    availableAt: time, time: time)
            }
            // Held for a quiet time: not an attempt, so the same one.
            for (due, devices) in result.held.sorted(by: { $0.key < $1.key }) where !devices.isEmpty {
                try await connection.query(
                    Self.enqueueStatement(
                        pushID: job.pushID, kind: .batch, deviceIDs: devices, attempt: job.attempt, availableAt: due, time: time,
                        quiet: true))
            }
            // The job is still open while its progress is recorded: the push cannot be done.
            guard remaining == nil else { return events }
            let done = try await Self.closeIfFinished(connection, pushID: job.pushID, time: time)
            return events || done
        }
        // A retry or a held batch is due later, a released batch at once: either way a new job.
        if !result.retries.isEmpty || !result.released.isEmpty || !result.held.isEmpty { await work.announce(.deliveryJobs) }
        if events { await work.announce(.webhookEvents) }
    }

    /// Puts a claimed job back, due at `availableAt` (the worker stops); nothing if another worker
    /// has claimed it since.
    package func release(_ job: PushJob, availableAt: Int64) async throws {
        try await database.query(
            "UPDATE push_jobs SET state = 'ready', available_at = \(availableAt), lease_until = 0 WHERE \(Self.held(job))")
        await work.announce(.deliveryJobs)
    }

    // MARK: Helpers

    /// The job's row, as long as this claim of it holds.
    static func held(_ job: PushJob) -> SQL {
        "id = \(job.id) AND claim = \(job.claim) AND state = 'claimed'"
    }

    static func leaseLost(_ job: PushJob) -> StoreError {
        StoreError(reason: .leaseLost, message: "job \(job.id): its lease ran out and another worker claimed it")
    }

    /// Stores a push and its fan-out job on `connection` (inside the caller's transaction).
    ///
    /// - Parameter zoneGroups: a local-time occurrence's push: instead of one fan-out, one per
    ///   group of zones, due at the group's `dueAt` (or `availableAt`, if later) and limited to
    ///   its zones.
    static func insert(
        _ connection: any SQLExecutor, id: UUID, applicationID: UUID, request: String, expiresAt: Int64?, availableAt: Int64, time: Int64,
        zoneGroups: [PushSchedule.Slot]? = nil
    ) async throws {
        try await connection.query(
            """
            INSERT INTO pushes (id, app_id, request, status, created_at, expires_at)
            VALUES (\(id), \(applicationID), \(request), 'queued', \(time), \(expiresAt))
            """)
        guard let zoneGroups else {
            try await enqueue(connection, pushID: id, kind: .fanout, deviceIDs: [], attempt: 0, availableAt: availableAt, time: time)
            return
        }
        for group in zoneGroups {
            try await connection.query(
                """
                INSERT INTO push_jobs (push_id, kind, cursor, device_ids, attempt, state, available_at, lease_until, created_at, time_zones)
                VALUES (\(id), 'fanout', 0, '', 0, 'ready', \(max(availableAt, group.dueAt)), 0, \(time), \(group.timeZones.joined(separator: ",")))
                """)
        }
    }

    static func enqueue(
        _ connection: any SQLExecutor, pushID: UUID, kind: PushJob.Kind, deviceIDs: [Int64], attempt: Int, availableAt: Int64, time: Int64
    ) async throws {
        try await connection.query(
            enqueueStatement(pushID: pushID, kind: kind, deviceIDs: deviceIDs, attempt: attempt, availableAt: availableAt, time: time))
    }

    /// The INSERT of a ready job; with `onlyIf`, only if that CTE has a row; `quiet` for a batch
    /// held for its devices' quiet time.
    static func enqueueStatement(
        pushID: UUID, kind: PushJob.Kind, deviceIDs: [Int64], attempt: Int, availableAt: Int64, time: Int64, onlyIf source: String? = nil,
        quiet: Bool = false
    ) -> SQL {
        var statement: SQL = """
            INSERT INTO push_jobs (push_id, kind, cursor, device_ids, attempt, state, available_at, lease_until, created_at, quiet)
            SELECT \(pushID), \(kind.rawValue), 0, \(deviceIDs.map(String.init).joined(separator: ",")), \(attempt), 'ready',
                \(availableAt), 0, \(time), \(quiet ? 1 : 0)
            """
        if let source { statement.append(" WHERE EXISTS (SELECT 1 FROM \(unsafeRaw: source))") }
        return statement
    }

    /// Marks the push done if no job of it is open, and then queues its `push.done` event in
    /// the same transaction. Returns whether an event was queued.
    ///
    /// Called by every transaction that closes one of the push's jobs, after it closed it. On
    /// PostgreSQL it first locks the push's row: under READ COMMITTED two such transactions
    /// (the fan-out's last page, a batch's completion) could otherwise each see the other's job
    /// still open, uncommitted, and neither would close the push, which would stay `sending`
    /// forever. With the lock, the second one checks after the first commits. (SQLite runs one
    /// writer at a time.)
    static func closeIfFinished(_ connection: any SQLExecutor, pushID: UUID, time: Int64) async throws -> Bool {
        if connection.dialect == .postgres {
            try await connection.query("SELECT id FROM pushes WHERE id = \(pushID)\(connection.dialect.rowLock(.update))")
        }
        // One open job is enough to know (the index gives the push's open jobs directly).
        let open = try await connection.query(
            "SELECT 1 AS open FROM push_jobs WHERE push_id = \(pushID) AND state IN ('ready', 'claimed') LIMIT 1")
        guard open.isEmpty else { return false }
        let closed = try await connection.query(
            "UPDATE pushes SET status = 'done' WHERE id = \(pushID) AND status <> 'done' RETURNING \(unsafeRaw: pushColumns)")
        guard let row = closed.first else { return false }
        // The numbers an autobadge push sent are needed only while its batches may be retried.
        try await connection.query("DELETE FROM push_badges WHERE push_id = \(pushID)")
        return try await pushDone(connection, try push(row), time: time)
    }

    /// The push whose columns `row` holds, each name after `prefix`.
    static func push(_ row: SQLRow, prefix: String = "") throws -> StoredPush {
        StoredPush(
            id: try row.uuid(prefix + "id"), applicationID: try row.uuid(prefix + "app_id"), request: try row.string(prefix + "request"),
            status: try row.string(prefix + "status"), createdAt: try row.int(prefix + "created_at"),
            expiresAt: try row.optionalInt(prefix + "expires_at"), targeted: Int(try row.int(prefix + "targeted")),
            delivered: Int(try row.int(prefix + "delivered")), failed: Int(try row.int(prefix + "failed")),
            invalidTokens: Int(try row.int(prefix + "invalid_tokens")), expired: Int(try row.int(prefix + "expired")),
            skipped: Int(try row.int(prefix + "skipped")), failures: [:], lastError: try row.optionalString(prefix + "last_error"),
            lastErrorAt: try row.optionalInt(prefix + "last_error_at"))
    }

    static func job(_ row: SQLRow) throws -> PushJob {
        let ids = deviceIDs(try row.string("device_ids"))
        return PushJob(
            id: try row.int("id"), pushID: try row.uuid("push_id"),
            kind: PushJob.Kind(rawValue: try row.string("kind")) ?? .batch, cursor: try row.int("cursor"),
            deviceIDs: ids, attempt: Int(try row.int("attempt")), claim: try row.int("claim"),
            timeZones: try row.optionalString("time_zones").map(ScheduleRepository.zones))
    }

    /// The aggregate that joins a query's `id` column as a job stores its devices (`deviceIDs(_:)`
    /// reads it back), in no promised order; NULL over no rows.
    static func joinedIDs(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: "group_concat(id, ',')"
        case .postgres: "string_agg(id::text, ',')"
        }
    }

    /// A job's device ids from their stored text (`1,2,3`): what `split(separator: ",")
    /// .compactMap { Int64($0) }` gives (pieces that are no number are left out), read byte by
    /// byte: that form costs a `Substring` and a generic parse per id, thousands a claim.
    static func deviceIDs(_ text: String) -> [Int64] {
        var text = text
        return text.withUTF8 { bytes in
            var ids: [Int64] = []
            ids.reserveCapacity(bytes.count / 2 + 1)
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
                if let id = Self.integer(bytes, start..<end) { ids.append(id) }
                start = end + 1
            }
            return ids
        }
    }

    /// `Int64(text)` of the bytes in `range`: an optional sign, then decimal digits; nil for
    /// anything else or beyond Int64's range.
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64? {
        var index = range.lowerBound
        let negative = index < range.upperBound && bytes[index] == UInt8(ascii: "-")
        if index < range.upperBound, negative || bytes[index] == UInt8(ascii: "+") { index += 1 }
        guard index < range.upperBound else { return nil }
        var value: Int64 = 0
        while index < range.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, carry) =
                negative ? shifted.subtractingReportingOverflow(Int64(digit)) : shifted.addingReportingOverflow(Int64(digit))
            guard !overflow, !carry else { return nil }
            value = next
            index += 1
        }
        return value
    }
}
