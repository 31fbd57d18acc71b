import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

/// The delivery queue: claims, leases and resuming after a crash.
@Suite struct PushQueueTests {
    func registerDevices(_ db: TestDatabase, _ fixture: Fixture, count: Int) async throws {
        for _ in 0..<count {
            _ = try await db.store.devices.register(
                on: fixture.platform, try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true))
        }
    }

    /// Registers `devices` devices, accepts a push to them and runs its fan-out: one batch job
    /// waits in the queue. Returns the push and the devices' ids.
    func fannedOut(_ db: TestDatabase, _ fixture: Fixture, devices: Int) async throws -> (UUID, [Int64]) {
        try await registerDevices(db, fixture, count: devices)
        let id = try await db.store.pushes.create(
            applicationID: fixture.app.id, try .accepting(#"{"message":{"body":"hi"},"target":{"platform":"ios"}}"#))
        let fanout = try #require(try await db.store.pushes.claim(lease: 60_000)).job
        let push = try PushInput(message: .init(body: "hi"), target: .init(platform: "ios")).validated(now: 0)
        let ids = try await db.store.pushes.audience(of: push, applicationID: fixture.app.id, after: fanout.cursor, limit: 10)
        try await db.store.pushes.advance(fanout, page: ids, finished: true)
        return (id, ids)
    }

    @Test(arguments: Backend.available)
    func aFanOutCutShortResumesWhereItWasAfterItsLease(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            try await registerDevices(db, fixture, count: 25)
            let request = #"{"message":{"body":"hi"},"target":{"platform":"ios"}}"#
            let push = try JSONDecoder().decode(PushInput.self, from: Data(request.utf8)).validated(now: clock.now)
            let id = try await db.store.pushes.create(applicationID: fixture.app.id, try .accepting(request, now: clock.now))

            // A worker takes the fan-out, writes one page of 10, and dies.
            let fanout = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(fanout.kind == .fanout)
            let first = try await db.store.pushes.audience(of: push, applicationID: fixture.app.id, after: fanout.cursor, limit: 10)
            try await db.store.pushes.advance(fanout, page: first, finished: false)

            // Its job is not handed out again while the lease holds; the batch it wrote is.
            let batch = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(batch.kind == .batch)
            #expect(batch.deviceIDs == first)
            #expect(try await db.store.pushes.claim(lease: 60_000) == nil)

            // After the lease, another worker takes the fan-out up at its cursor.
            clock.advance(60_001)
            var seen = first
            while let job = try await db.store.pushes.claim(lease: 60_000)?.job {
                switch job.kind {
                case .fanout:
                    #expect(job.cursor == first.last)
                    var cursor = job.cursor
                    while true {
                        let page = try await db.store.pushes.audience(of: push, applicationID: fixture.app.id, after: cursor, limit: 10)
                        try await db.store.pushes.advance(job, page: page, finished: page.count < 10)
                        if page.count < 10 { break }
                        cursor = page.last!
                    }
                case .batch:
                    if job.id != batch.id { seen += job.deviceIDs }
                    var result = BatchResult()
                    result.delivered = job.deviceIDs.count
                    try await db.store.pushes.complete(job, result)
                }
            }
            #expect(seen.count == 25)
            #expect(Set(seen).count == 25)
            let stored = try #require(try await db.store.pushes.find(id: id, applicationID: fixture.app.id))
            #expect(stored.targeted == 25)
            #expect(stored.status == "done")
            #expect(stored.delivered == 25)
        }
    }

    @Test(arguments: Backend.available)
    func retriesWaitForTheirTimeAndDeadTokensRespectReRegistration(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let (id, ids) = try await fannedOut(db, fixture, devices: 3)
            let batch = try #require(try await db.store.pushes.claim(lease: 60_000)).job

            var result = BatchResult()
            // ids[0]: dead before its last registration (stays active); ids[1]: dead after it; ids[2]: retry in 5 s.
            result.gone[ids[0]] = clock.now - 1
            result.gone[ids[1]] = clock.now + 1
            result.retries = [clock.now + 5000: [ids[2]]]
            try await db.store.pushes.complete(batch, result)

            let devices = try await db.store.pushes.targets(ids)
            #expect(devices.count == 3)
            let active = try await db.store.devices.search(applicationID: fixture.app.id, filter: DeviceFilter(), page: 1, size: 10)
                .devices.filter(\.active).map(\.id)
            #expect(Set(active) == [ids[0], ids[2]])

            #expect(try await db.store.pushes.claim(lease: 60_000) == nil)
            clock.advance(5000)
            let retry = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(retry.deviceIDs == [ids[2]])
            #expect(retry.attempt == 1)
            var failed = BatchResult()
            failed.failed["TooManyRequests"] = 1
            try await db.store.pushes.complete(retry, failed)
            let stored = try #require(try await db.store.pushes.find(id: id, applicationID: fixture.app.id))
            #expect(stored.invalidTokens == 2)
            #expect(stored.failures == ["TooManyRequests": 1])
            #expect(stored.status == "done")
        }
    }

    /// Issue 31, defect 7, at the store: a batch's progress is recorded part by part; a worker
    /// that dies after a part leaves the job with only the devices not yet recorded, which the
    /// next worker takes after the lease. Retries due at different instants become batch jobs
    /// due each at its own (defect 1), and the latest unreachable cause shows on the push.
    @Test(arguments: Backend.available)
    func aBatchCutShortResumesWithTheDevicesNotYetRecorded(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let (id, ids) = try await fannedOut(db, fixture, devices: 6)
            let batch = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(batch.deviceIDs == ids)

            var part = BatchResult()
            part.delivered = 2
            part.retries = [clock.now + 3000: [ids[2]], clock.now + 7000: [ids[3]]]
            part.lastError = "TLS handshake failed: certificate unknown (extra-ca.pem)"
            try await db.store.pushes.recordProgress(batch, part, remaining: Array(ids[4...]))
            let midway = try #require(try await db.store.pushes.find(id: id, applicationID: fixture.app.id))
            #expect(midway.delivered == 2)
            #expect(midway.status == "sending")
            #expect(midway.lastError == "TLS handshake failed: certificate unknown (extra-ca.pem)")
            #expect(midway.lastErrorAt == clock.now)

            // The worker dies. Nothing is due before its lease runs out, or the first retry.
            #expect(try await db.store.pushes.claim(lease: 60_000) == nil)
            clock.advance(3000)
            let early = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(early.deviceIDs == [ids[2]])
            #expect(early.attempt == 1)
            #expect(try await db.store.pushes.claim(lease: 60_000) == nil)
            clock.advance(4000)
            let late = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(late.deviceIDs == [ids[3]])
            clock.advance(60_000)
            let resumed = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(resumed.id == batch.id)
            #expect(resumed.deviceIDs == Array(ids[4...]))
            #expect(resumed.attempt == 0)
            // The first worker's late record is refused: the job is another claim's now.
            await #expect(throws: StoreError.self) {
                try await db.store.pushes.recordProgress(batch, BatchResult(), remaining: [])
            }

            for job in [early, late, resumed] {
                var result = BatchResult()
                result.delivered = job.deviceIDs.count
                try await db.store.pushes.complete(job, result)
            }
            let stored = try #require(try await db.store.pushes.find(id: id, applicationID: fixture.app.id))
            #expect(stored.delivered == 6)
            #expect(stored.status == "done")
        }
    }

    /// A batch reads exactly its devices, in id order, whether its ids lie close together (read
    /// as one range on PostgreSQL, the devices between them not its own) or far apart (one
    /// look-up each), and leaves out the ones that no longer exist.
    @Test(arguments: Backend.available)
    func aBatchReadsExactlyItsDevicesCloseTogetherOrFarApart(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            try await registerDevices(db, fixture, count: 40)
            let all = try await db.store.pushes.audience(
                of: try PushInput(message: .init(body: "hi"), target: .init(platform: "ios")).validated(now: 0),
                applicationID: fixture.app.id, after: 0, limit: 100)
            #expect(all.count == 40)
            // Close together: every other device of a run, and one that does not exist.
            let close = stride(from: 10, to: 20, by: 2).map { all[$0] }
            let missing = all[39] + 1_000
            #expect(try await db.store.pushes.targets(close.reversed()).map(\.id) == close)
            #expect(try await db.store.pushes.targets(close + [all[21]]).map(\.id) == close + [all[21]])
            // Far apart: the first and the last, with a missing id beyond them.
            let far = [all[0], all[39]]
            #expect(try await db.store.pushes.targets(far + [missing]).map(\.id) == far)
            #expect(try await db.store.pushes.targets([missing]).isEmpty)
        }
    }

    /// A batch's devices of two platforms, mixed, each keep their own platform and their token
    /// exactly, whatever it holds, and come in id order: as read a row a device (the path a
    /// push whose quiet time matters takes).
    @Test(arguments: Backend.available)
    func aBatchOfTwoPlatformsKeepsEachDevicesTokenExactly(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let (android, _) = try await db.store.platforms.create(
                applicationID: fixture.app.id, name: "android", type: .android, credentials: try Fixture.credentials(for: .android))
            for index in 0..<6 {
                let type: PlatformType = index % 2 == 0 ? .ios : .android
                let token = type == .ios ? randomAPNsToken() : randomFCMToken()
                _ = try await db.store.devices.register(
                    on: type == .ios ? fixture.platform : android,
                    try RegistrationInput(registrationToken: token).validated(for: type, requireToken: true))
            }
            let ids = try await db.database.query("SELECT id FROM devices ORDER BY id").map { try $0.int("id") }
            #expect(ids.count == 6)
            // Tokens no provider gives, which a separator would have cut: digits and colons as in
            // the joined form, a comma, letters of more than one byte.
            try await db.database.query("UPDATE devices SET token = '12:3:x' WHERE id = \(ids[1])")
            try await db.database.query("UPDATE devices SET token = 'é,ü:0:' WHERE id = \(ids[2])")

            let targets = try await db.store.pushes.targets(ids.reversed())
            #expect(targets.map(\.id) == ids)
            #expect(targets == (try await db.store.pushes.targets(ids, quietTime: true)))
            #expect(targets[1].token == "12:3:x" && targets[1].platformID == android.id && targets[1].platformType == .android)
            #expect(targets[2].token == "é,ü:0:" && targets[2].platformID == fixture.platform.id && targets[2].platformType == .ios)
        }
    }

    /// A worker that stalled past its lease while another took the job over records nothing:
    /// its renewal, completion and release are refused, and the counters count the job once.
    @Test(arguments: Backend.available)
    func aWorkerThatLostItsLeaseRecordsNothing(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let (id, _) = try await fannedOut(db, fixture, devices: 2)

            let stalled = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            clock.advance(60_001)
            let current = try #require(try await db.store.pushes.claim(lease: 60_000)).job
            #expect(current.id == stalled.id)
            #expect(current.claim == stalled.claim + 1)

            var result = BatchResult()
            result.delivered = 2
            let renewal = await #expect(throws: StoreError.self) { try await db.store.pushes.renew(stalled, lease: 60_000) }
            #expect(renewal?.reason == .leaseLost)
            let completion = await #expect(throws: StoreError.self) { try await db.store.pushes.complete(stalled, result) }
            #expect(completion?.reason == .leaseLost)
            try await db.store.pushes.release(stalled, availableAt: 0)
            #expect(try await db.store.pushes.claim(lease: 60_000) == nil, "the stalled worker's release put the job back")

            try await db.store.pushes.renew(current, lease: 60_000)
            try await db.store.pushes.complete(current, result)
            let stored = try #require(try await db.store.pushes.find(id: id, applicationID: fixture.app.id))
            #expect(stored.delivered == 2)
            #expect(stored.status == "done")
        }
    }
}

/// What a claim reads with its job: the push, the app's receipt switch, the push's send gate.
@Suite struct ClaimedJobTests {
    @Test(arguments: Backend.available)
    func aClaimReadsTheReceiptSwitchAndTheSendGateAsTheyAreNow(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            var ids: [Int64] = []
            for _ in 0..<4 {
                ids.append(
                    try await db.store.devices.register(
                        on: fixture.platform,
                        try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true)
                    ).id)
            }
            let request = #"{"message":{"body":"hi"},"target":{"platform":"ios"}}"#
            let id = try await db.store.pushes.create(applicationID: fixture.app.id, try .accepting(request, now: clock.now))

            let fanout = try #require(try await db.store.pushes.claim(lease: 60_000))
            #expect(fanout.push.id == id)
            #expect(try fanout.push.accepted() == .accepting(request, now: clock.now))
            #expect(fanout.includesReceiptID)
            #expect(!fanout.throttled)

            // An unthrottled page, then a throttled one (the push gets its send gate).
            try await db.store.pushes.advance(fanout.job, page: Array(ids[0..<2]), finished: false)
            let plain = try #require(try await db.store.pushes.claim(lease: 60_000))
            #expect(plain.job.deviceIDs == Array(ids[0..<2]))
            #expect(!plain.throttled)
            try await db.store.pushes.advance(fanout.job, page: Array(ids[2..<4]), finished: true, ratePerSecond: 2)
            _ = try await db.store.applications.update(id: fixture.app.id, name: nil, description: nil, includesReceiptID: false)
            clock.advance(1_000)
            let gated = try #require(try await db.store.pushes.claim(lease: 60_000))
            #expect(gated.job.deviceIDs == Array(ids[2..<4]))
            #expect(gated.push.id == id)
            #expect(gated.throttled)
            #expect(!gated.includesReceiptID)
        }
    }
}
