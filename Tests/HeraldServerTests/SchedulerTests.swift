import Foundation
import HeraldCore
import HeraldDelivery
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Prometheus
import ServiceLifecycle
import Synchronization
import Testing

/// The scheduler on the test clock: when it wakes, what firing makes, exactly once, expiry of a
/// missed schedule, local time, and a clean stop.
@Suite struct SchedulerTests {
    @Test(arguments: Backend.available)
    func theSchedulerSleepsUntilTheEarliestDueTimeButAtMostItsBound(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let registry = PrometheusCollectorRegistry()
            let service = SchedulerService(
                store: world.store, configuration: SchedulingConfiguration(maximumSleep: .seconds(1)), clock: world.clock.epochClock,
                sleep: { _ in }, logger: TestDatabase.logger,
                metrics: DeliveryMetrics(factory: Observability.metricsFactory(registry: registry)))
            #expect(await service.tick() == .milliseconds(1000))
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleIn":65"#), client)
            #expect(await service.tick() == .milliseconds(1000))
            world.clock.advance(64_300)
            #expect(await service.tick() == .milliseconds(700))
            world.clock.advance(699)
            #expect(await service.tick() == .milliseconds(1))
            #expect(try await world.pushCount() == 0)
            world.clock.advance(1)
            #expect(await service.tick() == .milliseconds(1000))
            #expect(try await world.pushCount() == 1)
            let fired = try await world.store.schedules.firedSlots(scheduleID: id)
            #expect(fired.count == 1)
            #expect(fired.first?.firedAt == fired.first?.dueAt)
            // The firing's lateness went to the metrics: one sample, of 0 s.
            let text = registry.emitToString()
            #expect(PrometheusCollectorRegistry.value("herald_scheduler_lateness_seconds_count", in: text) == 1)
            #expect(PrometheusCollectorRegistry.value("herald_scheduler_lateness_seconds_sum", in: text) == 0)
        }
    }

    @Test(arguments: Backend.available)
    func firingMakesTheAcceptedPushAndItsFanOutJobOnce(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let id = try await world.schedule(
                ScheduleHarness.push(#""scheduleIn":3600,"expiryTime":\#(world.clock.now + 7_200_000)"#), client)
            world.clock.advance(3_600_000)
            let fired = try await world.store.schedules.fireDue(limit: 10)
            #expect(fired.count == 1)
            #expect(try await world.store.schedules.fireDue(limit: 10).isEmpty)
            let pushID = try #require(fired.first?.pushID)
            let push = try #require(try await world.store.pushes.find(id: pushID, applicationID: world.fixture.app.id))
            #expect(push.status == "queued")
            #expect(push.createdAt == world.clock.now)
            #expect(push.expiresAt == world.clock.now + 3_600_000)
            #expect(try push.accepted().request?["scheduleAt"] != nil)
            let jobs = try await world.db.database.query(
                "SELECT kind, available_at FROM push_jobs WHERE push_id = \(pushID)")
            #expect(jobs.count == 1)
            #expect(try jobs.first?.string("kind") == "fanout")
            #expect(try jobs.first?.int("available_at") == world.clock.now)
            // The receipt answers like any push's.
            let status = try await world.request(.get, "/v1/push/\(pushID.uuidString.lowercased())", client)
            #expect(status.status == .ok)
            #expect(try await world.request(.get, "/v1/schedules/\(id)", client).status == .notFound)
        }
    }

    @Test(arguments: Backend.available)
    func concurrentSchedulersFireEachScheduleExactlyOnce(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let count = 300
            let due = world.clock.now + 120_000
            for _ in 0..<count {
                _ = try await world.store.schedules.create(
                    applicationID: world.fixture.app.id,
                    try .accepting(ScheduleHarness.push(#""scheduleAt":\#(due)"#), now: world.clock.now, asSchedule: true),
                    localTime: nil, slots: [PushSchedule.Slot(dueAt: due, timeZones: [])])
            }
            world.clock.advance(120_000)
            let fired = try await world.fireConcurrently()
            #expect(fired.count == count)
            #expect(Set(fired.map(\.scheduleID)).count == count)
            #expect(try await world.pushCount() == Int64(count))
        }
    }

    @Test(arguments: Backend.available)
    func aScheduleMissedWhileDownFiresAtStartAndItsExpiryStillApplies(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            for _ in 0..<3 {
                _ = try await client.execute(
                    uri: "/v1/registration", method: .post, headers: basic(world.fixture),
                    body: body(#"{"os":"ios","registration_token":"\#(randomAPNsToken())"}"#))
            }
            let start = world.clock.now
            _ = try await world.schedule(
                ScheduleHarness.push(#""scheduleAt":\#(start + 120_000),"expiryTime":\#(start + 180_000)"#, body: "expires"), client)
            _ = try await world.schedule(ScheduleHarness.push(#""scheduleAt":\#(start + 130_000)"#, body: "keeps"), client)
            // The server was down for an hour past both.
            world.clock.advance(3_600_000)
            let scheduler = SchedulerService(
                store: world.store, configuration: SchedulingConfiguration(), clock: world.clock.epochClock, sleep: { _ in },
                logger: TestDatabase.logger)
            _ = await scheduler.tick()
            let pushes = try await world.db.database.query(
                "SELECT id, request FROM pushes WHERE app_id = \(world.fixture.app.id) ORDER BY request")
            #expect(pushes.count == 2)

            // The workers (on the same clock) count the expired one as expired, sending nothing.
            var configuration = DeliveryConfiguration()
            configuration.idlePoll = .milliseconds(10)
            configuration.apnsEndpoint = "https://127.0.0.1:1"
            configuration.maximumAttempts = 1
            let workers = DeliveryService(
                store: world.store, configuration: configuration, clock: world.clock.epochClock, logger: TestDatabase.logger)
            let running = Task { try await workers.run() }
            do {
                for row in pushes {
                    let id = try row.uuid("id")
                    if try row.string("request").contains("expires") {
                        try await DeliveryWorld.poll("the expired push is done") {
                            try await world.store.pushes.find(id: id, applicationID: world.fixture.app.id)?.status == "done"
                        }
                        let push = try #require(try await world.store.pushes.find(id: id, applicationID: world.fixture.app.id))
                        #expect(push.expired == 3)
                        #expect(push.delivered == 0)
                    } else {
                        try await DeliveryWorld.poll("the other push fans out") {
                            try await world.store.pushes.find(id: id, applicationID: world.fixture.app.id)?.targeted == 3
                        }
                        #expect(try await world.store.pushes.find(id: id, applicationID: world.fixture.app.id)?.expired == 0)
                    }
                }
            } catch {
                running.cancel()
                _ = await running.result
                throw error
            }
            running.cancel()
            _ = await running.result
        }
    }

    /// Each zone's slot reaches that zone's devices only, whether the push targets every device
    /// or a topic's subscribers.
    @Test(arguments: Backend.available, [#"{"platform":"all"}"#, #"{"topics":["news"]}"#])
    func aLocalTimePushReachesEachDeviceWhenTheTimeComesInItsZone(_ backend: Backend, target: String) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let path = "/admin/v1/apps/\(world.fixture.app.id.uuidString.lowercased())/delivery"
            _ = try await client.execute(
                uri: path, method: .put, headers: bearer(world.adminToken), body: body(#"{"default_time_zone":"Europe/Paris"}"#))
            var devices: [String: String] = [:]
            for zone in ["Asia/Tokyo", "America/New_York", "Europe/Berlin", ""] {
                let field = zone.isEmpty ? "" : #","time_zone":"\#(zone)""#
                let response = try await client.execute(
                    uri: "/v1/registration", method: .post, headers: basic(world.fixture),
                    body: body(#"{"os":"ios","registration_token":"\#(randomAPNsToken())","tags":["news"]\#(field)}"#))
                devices[zone] = try response.json()["device_uuid"] as? String
            }
            // 2027-01-15T09:00 UTC, and the clock a day before.
            let nineUTC: Int64 = 1_800_003_600_000 - 1_800_003_600_000 % 86_400_000 + 9 * 3_600_000
            world.clock.set(nineUTC - 86_400_000)
            let local = LocalDateTime(Date(timeIntervalSince1970: Double(nineUTC) / 1000))
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleLocal":"\#(local)""#, target: target), client)
            let listed = try await world.request(.get, "/v1/schedules/\(id)", client).json()
            #expect(listed["scheduled_for"] as? Int64 == nineUTC - 14 * 3_600_000)  // Pacific/Kiritimati, UTC+14
            #expect((listed["push"] as? [String: Any])?["scheduleLocal"] as? String == local.description)

            func audience(at instant: Int64) async throws -> Set<String> {
                world.clock.set(instant)
                var reached = Set<String>()
                for slot in try await world.store.schedules.fireDue(limit: 100) {
                    let push = try #require(try await world.store.pushes.find(id: slot.pushID, applicationID: world.fixture.app.id))
                    let page = try await world.store.pushes.audiencePage(
                        of: try push.accepted().push, applicationID: world.fixture.app.id, after: 0, limit: 100,
                        timeZones: try await world.store.pushes.timeZones(of: slot.pushID))
                    guard !page.deviceIDs.isEmpty else { continue }
                    let uuids = try await world.db.database.query(
                        "SELECT uuid FROM devices WHERE id IN (\(list: page.deviceIDs))"
                    ).map { try $0.string("uuid") }
                    reached.formUnion(uuids)
                }
                return reached
            }
            #expect(try await audience(at: nineUTC - 9 * 3_600_000) == [devices["Asia/Tokyo"]!])
            // Paris and Berlin share the instant; the device without a zone follows the app's default (Paris).
            #expect(try await audience(at: nineUTC - 3_600_000) == [devices["Europe/Berlin"]!, devices[""]!])
            #expect(try await audience(at: nineUTC) == [])
            #expect(try await audience(at: nineUTC + 5 * 3_600_000) == [devices["America/New_York"]!])
            // Still listed until its last zone (UTC-12) has fired.
            #expect(try await world.request(.get, "/v1/schedules/\(id)", client).status == .ok)
            _ = try await audience(at: nineUTC + 12 * 3_600_000)
            #expect(try await world.request(.get, "/v1/schedules/\(id)", client).status == .notFound)
        }
    }

    @Test(arguments: Backend.available)
    func theSchedulerStopsOnGracefulShutdown(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db in
            let asleep = Mutex(false)
            let service = SchedulerService(
                store: db.store, configuration: SchedulingConfiguration(maximumSleep: .seconds(60)),
                sleep: { duration in
                    asleep.withLock { $0 = true }
                    try await Task.sleep(for: duration)
                }, logger: TestDatabase.logger)
            let group = ServiceGroup(configuration: .init(services: [service], logger: TestDatabase.logger))
            let running = Task { try await group.run() }
            try await DeliveryWorld.poll("the scheduler sleeps") { asleep.withLock { $0 } }
            let stopping = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await running.value
            // It was asleep for a minute: the shutdown cut the sleep short.
            #expect(ContinuousClock.now - stopping < .seconds(10))
        }
    }
}

extension LocalDateTime {
    /// The UTC wall-clock reading of `date`, for tests.
    init(_ date: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { (value ?? 0) < 10 ? "0\(value ?? 0)" : "\(value ?? 0)" }
        let text = "\(c.year ?? 0)-\(two(c.month))-\(two(c.day))T\(two(c.hour)):\(two(c.minute)):\(two(c.second))"
        self = LocalDateTime(text)!
    }
}
