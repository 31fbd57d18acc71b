import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Recurring schedules in each device's own local time (`"schedule": {"cron", "local": true}`),
/// on the test clock: end to end through `POST /v1/push` to the mock APNs with devices in four
/// zones (one across a daylight-saving change), each occurrence one push and one receipt;
/// exactly once with concurrent schedulers; `count`, `until`, pause, resume, edit, cancel and
/// the grace window; field-named refusals.
@Suite struct LocalRecurringScheduleTests {
    static func ms(_ iso: String) -> Int64 { RecurringScheduleTests.ms(iso) }

    static func scheduler(_ store: Store, _ clock: TestClock, grace: Duration = .seconds(3600)) -> SchedulerService {
        SchedulerService(
            store: store, configuration: SchedulingConfiguration(maximumSleep: .seconds(30 * 86_400), missedOccurrenceGrace: grace),
            clock: clock.epochClock, sleep: { _ in }, logger: TestDatabase.logger)
    }

    /// Each device (by its zone) receives each of three occurrences of "every day at 08:00" at
    /// 08:00 in its own zone: Tokyo (UTC+9), Paris (clocks go back on 25 October), UTC (no zone
    /// registered: the app's default) and New York. Each occurrence is one push, whose receipt
    /// covers every zone; after `count` the schedule ends.
    @Test(arguments: Backend.available)
    func eachDeviceGetsEachOccurrenceAtItsOwnLocalTime(_ backend: Backend) async throws {
        let clock = TestClock(Self.ms("2026-10-23T12:00:00Z"))
        try await DeliveryWorld.run(backend, .init(batchSize: 10, clock: clock.epochClock)) { world, client in
            world.mock.update { $0.clock = clock.epochClock }
            var tokens: [String: String] = [:]
            for (name, zone) in [("tokyo", "Asia/Tokyo"), ("paris", "Europe/Paris"), ("utc", ""), ("newYork", "America/New_York")] {
                let token = randomAPNsToken()
                let extra = zone.isEmpty ? "" : #","time_zone":"\#(zone)""#
                let response = try await client.execute(
                    uri: "/v1/registration", method: .post, headers: basic(world.fixture),
                    body: body(#"{"os":"ios","registration_token":"\#(token)"\#(extra)}"#))
                #expect(response.status == .ok, "\(String(buffer: response.body))")
                tokens[name] = token
            }
            let response = try await client.execute(
                uri: "/v1/push", method: .post, headers: appAuth(world.fixture),
                body: body(
                    #"{"message":{"body":"Good morning"},"target":{"platform":"ios"},"schedule":{"cron":"0 8 * * *","local":true,"count":3}}"#
                ))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let id = try #require(try response.json()["schedule_id"] as? String)

            // Shown as wall-clock times; each begins when 08:00 first comes on Earth (UTC+14).
            let shown = try await client.execute(uri: "/v1/schedules/\(id)", method: .get, headers: appAuth(world.fixture)).json()
            #expect(shown["scheduled_for"] as? Int64 == Self.ms("2026-10-23T18:00:00Z"))
            let recurrence = try #require(shown["recurrence"] as? [String: Any])
            #expect(recurrence["local"] as? Bool == true)
            #expect(recurrence["time_zone"] == nil)
            #expect(recurrence["next_local_times"] as? [String] == ["2026-10-24T08:00:00", "2026-10-25T08:00:00", "2026-10-26T08:00:00"])
            #expect(recurrence["next_occurrences"] as? [Int64] == ["23", "24", "25"].map { Self.ms("2026-10-\($0)T18:00:00Z") })

            // 08:00 in each zone, in UTC: Tokyo 23:00 the day before; Paris 06:00 in summer time
            // and 07:00 from the 25th; the device without a zone 08:00; New York 12:00.
            let expected: [(String, String)] = [
                ("2026-10-23T23:00:00Z", "tokyo"), ("2026-10-24T06:00:00Z", "paris"), ("2026-10-24T08:00:00Z", "utc"),
                ("2026-10-24T12:00:00Z", "newYork"),
                ("2026-10-24T23:00:00Z", "tokyo"), ("2026-10-25T07:00:00Z", "paris"), ("2026-10-25T08:00:00Z", "utc"),
                ("2026-10-25T12:00:00Z", "newYork"),
                ("2026-10-25T23:00:00Z", "tokyo"), ("2026-10-26T07:00:00Z", "paris"), ("2026-10-26T08:00:00Z", "utc"),
                ("2026-10-26T12:00:00Z", "newYork"),
            ]
            let begins = ["2026-10-23T18:00:00Z", "2026-10-24T18:00:00Z", "2026-10-25T18:00:00Z"].map(Self.ms)
            var steps = Set(expected.map { Self.ms($0.0) }).union(begins).sorted()
            // A minute before each delivery too: nothing new may arrive then.
            steps = Set(steps + expected.map { Self.ms($0.0) - 60_000 }).sorted()
            let scheduler = Self.scheduler(world.db.store, clock)
            var receipts: [String] = []
            for step in steps {
                clock.set(step)
                for fired in try await world.db.store.schedules.fireDue(limit: 10) where fired.dueAt == step {
                    receipts.append(fired.pushID.lowercasedString)
                }
                _ = await scheduler.tick()
                let due = expected.filter { Self.ms($0.0) <= step }
                // Everything due is sent and recorded before the clock moves on (a batch still in
                // flight when the clock jumps hours ahead would outlive its lease and be sent again).
                try await DeliveryWorld.poll("\(due.count) deliveries by \(step)") {
                    guard world.mock.received.count >= due.count else { return false }
                    let busy = try await world.db.database.query(
                        """
                        SELECT COUNT(*) AS n FROM push_jobs WHERE state = 'claimed' OR (state = 'ready' AND available_at <= \(step))
                        """)
                    return try busy.first?.int("n") == 0
                }
                // Each delivery so far is the right device's, in the occurrence its time belongs to.
                let got = world.mock.received.map { received -> String in
                    let payload = (try? JSONSerialization.jsonObject(with: Data(received.payload))) as? [String: Any]
                    let receipt = payload?["receiptId"] as? String ?? "?"
                    return "\(received.deviceToken) \(receipts.firstIndex(of: receipt) ?? -1)"
                }
                let want = due.enumerated().map { index, delivery in "\(tokens[delivery.1] ?? "") \(index / 4)" }
                #expect(got.sorted() == want.sorted(), "at \(step)")
            }
            #expect(receipts.count == 3)
            // Each push is done when its last zones (UTC-11) have reached 08:00.
            clock.set(Self.ms("2026-10-26T19:00:00Z"))
            for receipt in receipts {
                let done = try await world.finished(receipt, client)
                #expect(done["delivered"] as? Int == 4, "\(done)")
                #expect(done["targeted"] as? Int == 4, "\(done)")
            }
            // Three occurrences, `count` 3: ended.
            let ended = try await client.execute(uri: "/v1/schedules/\(id)", method: .get, headers: appAuth(world.fixture))
            #expect(ended.status == .notFound)
            let past = try await world.db.store.schedules.pastOccurrences(scheduleID: id, limit: 10)
            #expect(past.map(\.localTime) == ["2026-10-26T08:00:00", "2026-10-25T08:00:00", "2026-10-24T08:00:00"])
            #expect(past.map(\.pushID) == receipts.reversed())
            #expect(try await world.db.store.schedules.nextDue() == nil)
        }
    }

    @Test(arguments: Backend.available)
    func concurrentSchedulersFireEachOccurrenceExactlyOnce(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            world.clock.set(Self.ms("2026-06-01T00:00:00Z"))
            let count = 12
            for _ in 0..<count {
                _ = try await world.schedule(RecurringScheduleTests.recurring(#"{"cron":"30 9 * * *","local":true}"#), client)
            }
            // 09:30 on 1 June begins at 19:30 UTC on 31 May (UTC+14): past. 2 June's begins at
            // 19:30 on 1 June.
            #expect(try await world.store.schedules.nextDue() == Self.ms("2026-06-01T19:30:00Z"))
            for day in ["01", "02"] {
                world.clock.set(Self.ms("2026-06-\(day)T19:30:00Z"))
                let fired = try await world.fireConcurrently()
                #expect(fired.count == count, "day \(day)")
                #expect(Set(fired.map(\.scheduleID)).count == count)
            }
            #expect(try await world.pushCount() == Int64(2 * count))
            // Each push has its fan-outs, one per group of zones, each due when its zones reach 09:30.
            let groups = PushSchedule.slots(for: try #require(LocalDateTime("2026-06-03T09:30")), defaultZone: "UTC")
            let jobs = try await world.db.database.query(
                """
                SELECT j.available_at, j.time_zones FROM push_jobs j JOIN push_schedule_slots l ON l.push_id = j.push_id
                WHERE l.local_time = '2026-06-03T09:30:00' AND j.kind = 'fanout'
                """)
            #expect(jobs.count == count * groups.count)
            let paris = try jobs.filter { try $0.string("time_zones").split(separator: ",").contains("Europe/Paris") }
            #expect(try paris.map { try $0.int("available_at") } == Array(repeating: Self.ms("2026-06-03T07:30:00Z"), count: count))
            #expect(try await world.store.schedules.nextDue() == Self.ms("2026-06-02T19:30:00Z") + 86_400_000)
        }
    }

    /// `until` bounds when an occurrence begins; pause stops a begun occurrence's remaining zones
    /// and resume continues with the next; an edit keeps it local; cancel ends it; an outage
    /// beyond the grace window skips and records.
    @Test(arguments: Backend.available)
    func untilPauseResumeEditCancelAndTheGraceWindow(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            world.clock.set(Self.ms("2026-06-01T12:00:00Z"))
            // Until 2 June 20:00 UTC: 2 June 08:00 (begins 1 June 18:00) and 3 June (2 June 18:00).
            let bounded = try await world.schedule(
                RecurringScheduleTests.recurring(#"{"cron":"0 8 * * *","local":true,"until":\#(Self.ms("2026-06-02T20:00:00Z"))}"#), client)
            let shown = try #require(try await RecurringScheduleTests.get(world, bounded, client))
            #expect(
                (shown["recurrence"] as? [String: Any])?["next_local_times"] as? [String] == ["2026-06-02T08:00:00", "2026-06-03T08:00:00"])

            let id = try await world.schedule(RecurringScheduleTests.recurring(#"{"cron":"0 8 * * *","local":true}"#), client)
            world.clock.set(Self.ms("2026-06-01T18:00:00Z"))
            let fired = try await world.store.schedules.fireDue(limit: 10)
            #expect(fired.count == 2)
            let begun = try #require(fired.first { $0.scheduleID == id }?.pushID)
            func openFanOuts(_ push: UUID) async throws -> Int64 {
                try await world.db.database.query(
                    "SELECT COUNT(*) AS n FROM push_jobs WHERE push_id = \(push) AND state = 'ready'"
                ).first?.int("n") ?? 0
            }
            #expect(try await openFanOuts(begun) > 30)

            // Paused at 22:00 UTC: the zones that have not reached 08:00 yet are not sent to.
            world.clock.set(Self.ms("2026-06-01T22:00:00Z"))
            #expect(try await world.request(.post, "/v1/schedules/\(id)/pause", client).status == .ok)
            let due = try await world.db.database.query(
                "SELECT COUNT(*) AS n FROM push_jobs WHERE push_id = \(begun) AND state = 'ready' AND available_at <= \(world.clock.now)")
            #expect(try await openFanOuts(begun) == (try due.first?.int("n") ?? -1))
            world.clock.set(Self.ms("2026-06-02T19:00:00Z"))
            #expect(try await world.store.schedules.fireDue(limit: 10).map(\.scheduleID) == [bounded])
            // Resumed: from the next occurrence to begin (4 June 08:00, at 3 June 18:00 UTC).
            let resumed = try await world.request(.post, "/v1/schedules/\(id)/resume", client)
            #expect(try resumed.json()["scheduled_for"] as? Int64 == Self.ms("2026-06-02T18:00:00Z") + 86_400_000)
            // The bounded one has ended after its two.
            #expect(try await RecurringScheduleTests.get(world, bounded, client) == nil)
            #expect(try await world.store.schedules.pastOccurrences(scheduleID: bounded, limit: 10).count == 2)

            // An edit: still local, at 07:00.
            let edited = try await world.request(
                .put, "/v1/schedules/\(id)", json: #"{"schedule":{"cron":"0 7 * * *","local":true}}"#, client)
            #expect(edited.status == .ok, "\(String(buffer: edited.body))")
            let recurrence = try #require(try edited.json()["recurrence"] as? [String: Any])
            #expect(recurrence["local"] as? Bool == true)
            // 3 June 07:00 began (UTC+14) at 2 June 17:00, before the change: the next to begin
            // is 4 June's.
            #expect((recurrence["next_local_times"] as? [String])?.first == "2026-06-04T07:00:00")

            // Down from 2 June 19:00 until 4 June 10:00, with an hour of grace: 4 June 07:00
            // began 17 hours ago, and still fires for the zones whose 07:00 is at most an hour old
            // (UTC-2) or still to come; the others are left out.
            world.clock.set(Self.ms("2026-06-04T10:00:00Z"))
            let late = try await world.store.schedules.fireDue(limit: 10).filter { $0.scheduleID == id }
            #expect(late.map(\.dueAt) == [Self.ms("2026-06-03T17:00:00Z")])
            let push = try #require(late.first?.pushID)
            let lateDue = try await world.db.database.query("SELECT available_at FROM push_jobs WHERE push_id = \(push)").map {
                try $0.int("available_at")
            }
            #expect(lateDue.min() == world.clock.now, "the zones within the grace window: now")
            #expect(lateDue.max() == Self.ms("2026-06-04T18:00:00Z"), "UTC-11, the furthest west of the zones Foundation lists")
            let groups = PushSchedule.slots(for: try #require(LocalDateTime("2026-06-04T07:00")), defaultZone: "UTC")
            #expect(lateDue.count == groups.filter { $0.dueAt >= Self.ms("2026-06-04T09:00:00Z") }.count)
            // The zones left out are counted with the occurrence, and shown with it.
            let leftOut = groups.filter { $0.dueAt < Self.ms("2026-06-04T09:00:00Z") }.reduce(0) { $0 + $1.timeZones.count }
            #expect(leftOut > 100)
            let lateRecord = try await world.store.schedules.pastOccurrences(scheduleID: id, limit: 10).first {
                $0.pushID == push.lowercasedString
            }
            #expect(lateRecord?.missedTimeZones == leftOut)
            let lateShown = try #require(try await RecurringScheduleTests.get(world, id, client))
            let lateView = (lateShown["occurrences"] as? [[String: Any]])?.first { $0["receipt_id"] as? String == push.lowercasedString }
            #expect(lateView?["missed_time_zones"] as? Int == leftOut)
            // An occurrence that reached every zone in time records none.
            #expect(
                try await world.store.schedules.pastOccurrences(scheduleID: id, limit: 10).filter { $0.pushID == begun.lowercasedString }
                    .map(\.missedTimeZones) == [nil])
            #expect(try await world.store.schedules.fireDue(limit: 10).filter { $0.scheduleID == id }.isEmpty)
            // A week down: every zone reached 5 June to 11 June too long ago: one skipped record.
            world.clock.set(Self.ms("2026-06-12T03:00:00Z"))
            _ = try await world.store.schedules.fireDue(limit: 10)
            let past = try await world.store.schedules.pastOccurrences(scheduleID: id, limit: 10)
            #expect(past.map(\.state).contains(.skipped))
            let skipped = try #require(past.first { $0.state == .skipped })
            #expect(skipped.localTime == "2026-06-05T07:00:00")
            #expect(skipped.skippedUntil == Self.ms("2026-06-11T17:00:00Z"))

            // Then 12 June 07:00, begun at 11 June 17:00, for the zones still to reach it.
            let current = try #require(try await world.store.schedules.fireDue(limit: 10).first { $0.scheduleID == id })
            #expect(current.dueAt == Self.ms("2026-06-11T17:00:00Z"))
            func later(_ push: UUID) async throws -> Int64 {
                try await world.db.database.query(
                    "SELECT COUNT(*) AS n FROM push_jobs WHERE push_id = \(push) AND state = 'ready' AND available_at > \(world.clock.now)"
                ).first?.int("n") ?? 0
            }
            #expect(try await later(current.pushID) > 0)
            // Cancelled: nothing further, its begun occurrence's remaining zones included.
            #expect(try await world.request(.delete, "/v1/schedules/\(id)", client).status == .noContent)
            #expect(try await later(current.pushID) == 0)
            #expect(try await RecurringScheduleTests.get(world, id, client) == nil)
        }
    }

    @Test(arguments: Backend.available)
    func badLocalSchedulesAreRefusedNamingTheField(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let cases: [(String, String)] = [
                (#""schedule":{"cron":"0 8 * * *","local":true,"time_zone":"Europe/Paris"}"#, "schedule.time_zone"),
                (#""schedule":{"cron":"0 8 * * *","local":"yes"}"#, "schedule.local"),
                (#""schedule":{"cron":"0 8 * * MON-SUN-FRI","local":true}"#, "schedule.cron"),
                (#""schedule":{"local":true}"#, "schedule.cron"),
                // More than once an hour: each occurrence takes a day to go round the zones.
                (#""schedule":{"cron":"* 8 * * *","local":true}"#, "schedule.cron"),
                (#""schedule":{"cron":"0,30 * * * *","local":true}"#, "schedule.cron"),
                (#""schedule":{"cron":"0 8 * * *","local":true,"count":0}"#, "schedule.count"),
                (#""schedule":{"cron":"0 8 * * *","local":true},"scheduleLocal":"2030-01-01T08:00""#, "schedule"),
            ]
            for (timing, field) in cases {
                let response = try await world.post(ScheduleHarness.push(timing), client)
                #expect(response.status == .badRequest, "\(timing): \(String(buffer: response.body))")
                #expect(try response.error()["field"] as? String == field, "\(timing)")
            }
            // An until before the first occurrence begins: 409 naming it.
            let early = try await world.post(
                ScheduleHarness.push(#""schedule":{"cron":"0 0 1 1 *","local":true,"until":\#(world.clock.now + 3_600_000)}"#), client)
            #expect(early.status == .conflict)
            #expect(try early.error()["field"] as? String == "schedule.until")
            #expect(try await world.pushCount() == 0)
            // Hourly is the most a local rule may fire; a zoned rule may still fire every minute.
            _ = try await world.schedule(ScheduleHarness.push(#""schedule":{"cron":"@hourly","local":true}"#), client)
            _ = try await world.schedule(ScheduleHarness.push(#""schedule":{"cron":"* * * * *","time_zone":"UTC"}"#), client)
            // `local: false` is a zoned rule as before.
            let zoned = try await world.schedule(RecurringScheduleTests.recurring(#"{"cron":"0 8 * * *","local":false}"#), client)
            let shown = try #require(try await RecurringScheduleTests.get(world, zoned, client))
            #expect((shown["recurrence"] as? [String: Any])?["time_zone"] as? String == "UTC")
            #expect((shown["recurrence"] as? [String: Any])?["local"] as? Bool == false)
        }
    }
}
