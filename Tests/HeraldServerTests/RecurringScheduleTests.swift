import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Recurring schedules (`"schedule": {"cron", …}` on `POST /v1/push`) on the test clock: each
/// occurrence its own push and receipt, listed under the schedule; pause, resume, edit, cancel;
/// `count` and `until`; missed occurrences within and beyond the grace window; daylight-saving
/// gaps and overlaps; exactly once with concurrent schedulers; field-named refusals.
@Suite struct RecurringScheduleTests {
    /// Epoch ms of an ISO-8601 UTC time (`2026-11-23T07:00:00Z`).
    static func ms(_ iso: String) -> Int64 {
        Int64(ISO8601DateFormatter().date(from: iso)!.timeIntervalSince1970 * 1000)
    }

    /// A scheduler on the world's clock that never sleeps by itself.
    static func scheduler(_ world: ScheduleHarness, grace: Duration = .seconds(3600)) -> SchedulerService {
        SchedulerService(
            store: world.store,
            configuration: SchedulingConfiguration(maximumSleep: .seconds(30 * 86_400), missedOccurrenceGrace: grace),
            clock: world.clock.epochClock, sleep: { _ in }, logger: TestDatabase.logger)
    }

    static func recurring(_ schedule: String, body: String = "Hello") -> String {
        ScheduleHarness.push(#""schedule":\#(schedule)"#, body: body)
    }

    /// The schedule as `GET /v1/schedules/:id` shows it, or nil for a 404.
    static func get(_ world: ScheduleHarness, _ id: String, _ client: any TestClientProtocol) async throws -> [String: Any]? {
        let response = try await world.request(.get, "/v1/schedules/\(id)", client)
        if response.status == .notFound { return nil }
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return try response.json()
    }

    @Test(arguments: Backend.available)
    func eachOccurrenceIsItsOwnPushWithItsOwnReceiptListedUnderTheSchedule(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            // Monday 23 November 2026, 06:00 UTC; 08:00 in Paris is 07:00 UTC in winter.
            world.clock.set(Self.ms("2026-11-23T06:00:00Z"))
            let id = try await world.schedule(Self.recurring(#"{"cron":"0 8 * * MON-FRI","time_zone":"Europe/Paris"}"#), client)
            #expect(try await world.pushCount() == 0)
            let shown = try #require(try await Self.get(world, id, client))
            #expect(shown["scheduled_for"] as? Int64 == Self.ms("2026-11-23T07:00:00Z"))
            let recurrence = try #require(shown["recurrence"] as? [String: Any])
            #expect(recurrence["cron"] as? String == "0 8 * * MON-FRI")
            #expect(recurrence["time_zone"] as? String == "Europe/Paris")
            #expect(recurrence["fired"] as? Int64 == 0)
            #expect(recurrence["paused"] as? Bool == false)
            #expect(
                recurrence["next_occurrences"] as? [Int64]
                    == ["23", "24", "25", "26", "27"].map { Self.ms("2026-11-\($0)T07:00:00Z") })
            #expect((shown["occurrences"] as? [Any])?.isEmpty == true)
            #expect(((shown["push"] as? [String: Any])?["schedule"] as? [String: Any])?["cron"] as? String == "0 8 * * MON-FRI")

            // The scheduler sleeps until the next occurrence, fires it, and sleeps until the next.
            let scheduler = Self.scheduler(world)
            #expect(await scheduler.tick() == .seconds(3600))
            var receipts: [String] = []
            let following = ["23": "11-24", "24": "11-25", "25": "11-26", "26": "11-27", "27": "11-30", "30": "12-01"]
            for day in ["23", "24", "25", "26", "27", "30"] {
                world.clock.set(Self.ms("2026-11-\(day)T07:00:00Z"))
                let wait = await scheduler.tick()
                let next = Self.ms("2026-\(following[day]!)T07:00:00Z")
                #expect(wait == .milliseconds(next - world.clock.now), "after \(day)")
                let listed = try #require(try await Self.get(world, id, client))
                let latest = try #require((listed["occurrences"] as? [[String: Any]])?.first)
                #expect(latest["due_at"] as? Int64 == world.clock.now)
                #expect(latest["state"] as? String == "fired")
                receipts.append(try #require(latest["receipt_id"] as? String))
            }
            // Nothing fired on the weekend: six weekdays, six pushes, six receipts.
            #expect(try await world.pushCount() == 6)
            #expect(Set(receipts).count == 6)
            for receipt in receipts {
                let status = try await world.request(.get, "/v1/push/\(receipt)", client)
                #expect(status.status == .ok)
                #expect(try status.json()["receipt_id"] as? String == receipt)
            }
            let listed = try #require(try await Self.get(world, id, client))
            #expect((listed["recurrence"] as? [String: Any])?["fired"] as? Int64 == 6)
            #expect((listed["occurrences"] as? [[String: Any]])?.map { $0["receipt_id"] as? String } == receipts.reversed())
            // The list shows it too, with its rule but not its past.
            let list = try await world.request(.get, "/v1/schedules", client)
            let items = try #require(try JSONSerialization.jsonObject(with: Data(list.body.readableBytesView)) as? [[String: Any]])
            #expect(items.count == 1)
            #expect(items.first?["recurrence"] is [String: Any])
            #expect(items.first?["occurrences"] == nil)
        }
    }

    @Test(arguments: Backend.available)
    func countAndUntilEndTheSchedule(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            world.clock.set(Self.ms("2026-06-01T00:10:00Z"))
            let counted = try await world.schedule(
                Self.recurring(#"{"cron":"0 * * * *","time_zone":"UTC","count":2}"#, body: "counted"), client)
            let until = Self.ms("2026-06-01T03:00:00Z")
            let bounded = try await world.schedule(
                Self.recurring(#"{"cron":"30 * * * *","time_zone":"UTC","until":\#(until)}"#, body: "bounded"), client)
            let shown = try #require(try await Self.get(world, counted, client))
            #expect(
                (shown["recurrence"] as? [String: Any])?["next_occurrences"] as? [Int64]
                    == [Self.ms("2026-06-01T01:00:00Z"), Self.ms("2026-06-01T02:00:00Z")])
            #expect((shown["recurrence"] as? [String: Any])?["count"] as? Int64 == 2)
            let scheduler = Self.scheduler(world)
            for minute in stride(from: 0, through: 600, by: 10) {
                world.clock.set(Self.ms("2026-06-01T00:10:00Z") + Int64(minute) * 60_000)
                _ = await scheduler.tick()
            }
            // 01:00 and 02:00; 00:30, 01:30 and 02:30.
            #expect(try await world.store.schedules.pastOccurrences(scheduleID: counted, limit: 10).count == 2)
            #expect(
                try await world.store.schedules.pastOccurrences(scheduleID: bounded, limit: 10).map(\.dueAt)
                    == ["02:30", "01:30", "00:30"].map { Self.ms("2026-06-01T\($0):00Z") })
            #expect(try await world.pushCount() == 5)
            // Ended: no longer shown, nothing left to wait for.
            #expect(try await Self.get(world, counted, client) == nil)
            #expect(try await Self.get(world, bounded, client) == nil)
            #expect(try await world.store.schedules.nextDue() == nil)
        }
    }

    @Test(arguments: Backend.available)
    func pauseResumeEditAndCancel(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            world.clock.set(Self.ms("2026-06-01T00:10:00Z"))
            let id = try await world.schedule(Self.recurring(#"{"cron":"0 * * * *","time_zone":"UTC"}"#), client)
            let scheduler = Self.scheduler(world)

            let paused = try await world.request(.post, "/v1/schedules/\(id)/pause", client)
            #expect(paused.status == .ok)
            #expect((try paused.json()["recurrence"] as? [String: Any])?["paused"] as? Bool == true)
            // Paused, nothing is due: the scheduler sleeps its whole bound.
            #expect(await scheduler.tick() == .seconds(30 * 86_400))
            world.clock.set(Self.ms("2026-06-01T03:20:00Z"))
            _ = await scheduler.tick()
            #expect(try await world.pushCount() == 0)
            #expect(try await Self.get(world, id, client)?["recurrence"].map { ($0 as? [String: Any])?["paused"] as? Bool } == true)

            // Resumed: from the next occurrence after now; the paused hours are not sent.
            let resumed = try await world.request(.post, "/v1/schedules/\(id)/resume", client)
            #expect(resumed.status == .ok)
            #expect(try resumed.json()["scheduled_for"] as? Int64 == Self.ms("2026-06-01T04:00:00Z"))
            world.clock.set(Self.ms("2026-06-01T04:00:00Z"))
            _ = await scheduler.tick()
            #expect(try await world.pushCount() == 1)

            // Edited: a new rule and message, from the new rule's next occurrence.
            let edited = try await world.request(
                .put, "/v1/schedules/\(id)", json: #"{"schedule":{"cron":"45 * * * *","time_zone":"UTC"},"message":{"body":"Changed"}}"#,
                client)
            #expect(edited.status == .ok, "\(String(buffer: edited.body))")
            let editedJSON = try edited.json()
            #expect(editedJSON["scheduled_for"] as? Int64 == Self.ms("2026-06-01T04:45:00Z"))
            #expect((editedJSON["recurrence"] as? [String: Any])?["fired"] as? Int64 == 1)
            world.clock.set(Self.ms("2026-06-01T04:45:00Z"))
            let fired = try await world.store.schedules.fireDue(limit: 10)
            #expect(fired.count == 1)
            let pushID = try #require(fired.first?.pushID)
            let push = try #require(try await world.store.pushes.find(id: pushID, applicationID: world.fixture.app.id))
            #expect(try push.accepted().push.body == "Changed")

            // Recurring stays recurring; a one-time schedule cannot be paused.
            let toOnce = try await world.request(.put, "/v1/schedules/\(id)", json: #"{"scheduleIn":7200}"#, client)
            #expect(toOnce.status == .conflict)
            #expect(try toOnce.error()["field"] as? String == "schedule")
            #expect(try toOnce.error()["code"] as? String == "schedule_kind")
            let once = try await world.schedule(ScheduleHarness.push(#""scheduleIn":7200"#), client)
            // Nor does a one-time schedule become recurring (well formed, so 409 rather than 400).
            let toRecurring = try await world.request(
                .put, "/v1/schedules/\(once)", json: #"{"schedule":{"cron":"0 8 * * *","time_zone":"Europe/Paris"}}"#, client)
            #expect(toRecurring.status == .conflict)
            #expect(try toRecurring.error()["code"] as? String == "schedule_kind")
            // Also when the one-time schedule has an expiryTime, which a recurring one may not.
            let expiring = try await world.schedule(
                ScheduleHarness.push(#""scheduleIn":7200,"expiryTime":\#(world.clock.now + 10_800_000)"#), client)
            let expiringToRecurring = try await world.request(
                .put, "/v1/schedules/\(expiring)", json: #"{"schedule":{"cron":"0 8 * * *","local":true}}"#, client)
            #expect(expiringToRecurring.status == .conflict, "\(String(buffer: expiringToRecurring.body))")
            #expect(try expiringToRecurring.error()["code"] as? String == "schedule_kind")
            #expect(try await world.request(.post, "/v1/schedules/\(once)/pause", client).status == .conflict)
            // Another app sees nothing.
            #expect(try await world.request(.post, "/v1/schedules/\(id)/pause", as: world.other, client).status == .notFound)

            // Cancelled: gone, and nothing fires after.
            #expect(try await world.request(.delete, "/v1/schedules/\(id)", client).status == .noContent)
            #expect(try await Self.get(world, id, client) == nil)
            #expect(try await world.request(.post, "/v1/schedules/\(id)/resume", client).status == .notFound)
            world.clock.set(Self.ms("2026-06-02T00:00:00Z"))
            _ = try await world.store.schedules.fireDue(limit: 10)
            #expect(try await world.store.schedules.pastOccurrences(scheduleID: id, limit: 10).count == 2)
        }
    }

    /// A restart (or a scheduler far behind) within the grace window fires the latest missed
    /// occurrence once; beyond it, skips and records; either way the earlier ones are skipped.
    @Test(arguments: Backend.available)
    func missedOccurrencesFireOnceWithinTheGraceWindowAndAreSkippedBeyondIt(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            world.clock.set(Self.ms("2026-06-01T10:00:00Z"))
            let hourly = try await world.schedule(Self.recurring(#"{"cron":"0 * * * *","time_zone":"UTC"}"#, body: "hourly"), client)
            let daily = try await world.schedule(Self.recurring(#"{"cron":"0 8 * * *","time_zone":"UTC"}"#, body: "daily"), client)
            // Down from 10:00 to 13:30: 11:00 and 12:00 are skipped, 13:00 (30 min ago) fires.
            world.clock.set(Self.ms("2026-06-01T13:30:00Z"))
            _ = await Self.scheduler(world).tick()
            var past = try await world.store.schedules.pastOccurrences(scheduleID: hourly, limit: 10)
            #expect(past.map(\.state) == [.fired, .skipped])
            #expect(past.first?.dueAt == Self.ms("2026-06-01T13:00:00Z"))
            #expect(past.last?.dueAt == Self.ms("2026-06-01T11:00:00Z"))
            #expect(past.last?.skippedUntil == Self.ms("2026-06-01T13:00:00Z"))
            #expect(try await world.pushCount() == 1)

            // Down until 11:00 the next day: the daily 08:00 is three hours old, skipped.
            world.clock.set(Self.ms("2026-06-02T11:00:00Z"))
            let beyond = Self.scheduler(world)
            _ = await beyond.tick()
            past = try await world.store.schedules.pastOccurrences(scheduleID: daily, limit: 10)
            #expect(past.map(\.state) == [.skipped])
            #expect(past.first?.dueAt == Self.ms("2026-06-01T08:00:00Z") + 86_400_000)
            #expect(past.first?.skippedUntil == Self.ms("2026-06-03T08:00:00Z"))
            // The hourly one fired 11:00 (just due) and skipped 14:00 to 10:00.
            #expect(try await world.pushCount() == 2)
            let shown = try #require(try await Self.get(world, daily, client))
            #expect(shown["scheduled_for"] as? Int64 == Self.ms("2026-06-03T08:00:00Z"))
            let skipped = try #require((shown["occurrences"] as? [[String: Any]])?.first)
            #expect(skipped["state"] as? String == "skipped")
            #expect(skipped["skipped_until"] as? Int64 == Self.ms("2026-06-03T08:00:00Z"))
            #expect(skipped["receipt_id"] == nil)

            // A grace of ten minutes: 08:20 is too late for 08:00.
            world.clock.set(Self.ms("2026-06-03T08:20:00Z"))
            _ = await Self.scheduler(world, grace: .seconds(600)).tick()
            #expect(try await world.store.schedules.pastOccurrences(scheduleID: daily, limit: 10).map(\.state) == [.skipped, .skipped])
            // Within the default hour, it fires.
            world.clock.set(Self.ms("2026-06-04T08:59:00Z"))
            _ = await Self.scheduler(world).tick()
            #expect(try await world.store.schedules.pastOccurrences(scheduleID: daily, limit: 10).first?.state == .fired)
        }
    }

    /// What fires when the clock passes through a daylight-saving change, ticking every 15 min.
    func firings(
        _ world: ScheduleHarness, _ client: any TestClientProtocol, _ schedule: String, from: String, to: String
    ) async throws -> [Int64] {
        let id = try await world.schedule(Self.recurring(schedule), client)
        let scheduler = Self.scheduler(world)
        var time = Self.ms(from)
        while time <= Self.ms(to) {
            world.clock.set(time)
            _ = await scheduler.tick()
            time += 15 * 60_000
        }
        return try await world.store.schedules.pastOccurrences(scheduleID: id, limit: 10).filter { $0.state == .fired }.map(\.dueAt)
            .reversed()
    }

    @Test(arguments: Backend.available)
    func aTimeSkippedInSpringFiresOnceAfterTheGapAndARepeatedOneOnce(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            world.clock.set(Self.ms("2026-03-27T12:00:00Z"))
            // Paris springs forward at 02:00 on 29 March: 02:30 does not exist that night.
            let gap = try await firings(
                world, client, #"{"cron":"30 2 * * *","time_zone":"Europe/Paris"}"#, from: "2026-03-27T12:00:00Z",
                to: "2026-03-30T12:00:00Z")
            #expect(gap == ["2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"].map(Self.ms))
            // Paris falls back at 03:00 on 25 October: 02:30 comes twice and fires once.
            world.clock.set(Self.ms("2026-10-24T12:00:00Z"))
            let overlap = try await firings(
                world, client, #"{"cron":"30 2 * * *","time_zone":"Europe/Paris"}"#, from: "2026-10-24T12:00:00Z",
                to: "2026-10-26T12:00:00Z")
            #expect(overlap == ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"].map(Self.ms))
            // New York falls back at 02:00 on 1 November: 01:30 comes twice and fires once.
            world.clock.set(Self.ms("2026-10-31T12:00:00Z"))
            let newYork = try await firings(
                world, client, #"{"cron":"30 1 * * *","time_zone":"America/New_York"}"#, from: "2026-10-31T12:00:00Z",
                to: "2026-11-02T12:00:00Z")
            #expect(newYork == ["2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"].map(Self.ms))
        }
    }

    @Test(arguments: Backend.available)
    func concurrentSchedulersFireEachOccurrenceExactlyOnce(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            world.clock.set(Self.ms("2026-06-01T00:00:30Z"))
            let count = 150
            let request = Self.recurring(#"{"cron":"* * * * *","time_zone":"UTC"}"#)
            for _ in 0..<count {
                _ = try await world.store.schedules.createRecurring(
                    applicationID: world.fixture.app.id, try .accepting(request, now: world.clock.now, asSchedule: true),
                    recurrence: StoredRecurrence(cron: "* * * * *", timeZone: "UTC", until: nil, count: nil),
                    nextAt: Self.ms("2026-06-01T00:01:00Z"))
            }
            for minute in 1...2 {
                world.clock.set(Self.ms("2026-06-01T00:0\(minute):00Z"))
                let fired = try await world.fireConcurrently()
                #expect(fired.count == count, "minute \(minute)")
                #expect(Set(fired.map(\.scheduleID)).count == count)
                #expect(Set(fired.map(\.dueAt)) == [world.clock.now])
            }
            #expect(try await world.pushCount() == Int64(2 * count))
            #expect(try await world.store.schedules.nextDue() == Self.ms("2026-06-01T00:03:00Z"))
        }
    }

    @Test(arguments: Backend.available)
    func badScheduleFieldsAreRefusedNamingTheField(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let now = world.clock.now
            let cases: [(String, HTTPResponse.Status, String)] = [
                (#"{"cron":"61 * * * *"}"#, .badRequest, "schedule.cron"),
                (#"{"cron":"0 8 * * MON-FRI *"}"#, .badRequest, "schedule.cron"),
                (#"{"cron":"0 8 31 2 *"}"#, .badRequest, "schedule.cron"),
                (#"{"cron":5}"#, .badRequest, "schedule.cron"),
                (#"{"time_zone":"UTC"}"#, .badRequest, "schedule.cron"),
                (#"{"cron":"0 8 * * *","time_zone":"Mars/Olympus_Mons"}"#, .badRequest, "schedule.time_zone"),
                (#"{"cron":"0 8 * * *","count":0}"#, .badRequest, "schedule.count"),
                (#"{"cron":"0 8 * * *","count":"many"}"#, .badRequest, "schedule.count"),
                (#"{"cron":"0 8 * * *","until":"tomorrow"}"#, .badRequest, "schedule.until"),
                (#"{"cron":"0 8 * * *","until":\#(now - 1)}"#, .conflict, "schedule.until"),
                // The next 1 January is further than an hour away.
                (#"{"cron":"0 0 1 1 *","until":\#(now + 3_600_000)}"#, .conflict, "schedule.until"),
            ]
            for (schedule, status, field) in cases {
                let response = try await world.post(Self.recurring(schedule), client)
                #expect(response.status == status, "\(schedule): \(String(buffer: response.body))")
                #expect(try response.error()["field"] as? String == field, "\(schedule)")
            }
            let withTime = try await world.post(ScheduleHarness.push(#""scheduleIn":7200,"schedule":{"cron":"0 8 * * *"}"#), client)
            #expect(try withTime.error()["field"] as? String == "schedule")
            let withExpiry = try await world.post(
                ScheduleHarness.push(#""expiryTime":\#(now + 1),"schedule":{"cron":"0 8 * * *"}"#), client)
            #expect(try withExpiry.error()["field"] as? String == "expiryTime")
            #expect(try await world.pushCount() == 0)
            let list = try await world.request(.get, "/v1/schedules", client)
            #expect((try JSONSerialization.jsonObject(with: Data(list.body.readableBytesView)) as? [Any])?.isEmpty == true)
            // validate_only checks it and stores nothing.
            let validated = try await world.post(
                ScheduleHarness.push(#""validate_only":true,"schedule":{"cron":"0 8 * * *"}"#), client)
            #expect(validated.status == .ok)
            // Without a zone, the app's default zone (UTC unless changed), shown in the push.
            let id = try await world.schedule(Self.recurring(#"{"cron":"0 8 * * *"}"#), client)
            let shown = try #require(try await Self.get(world, id, client))
            #expect((shown["recurrence"] as? [String: Any])?["time_zone"] as? String == "UTC")
            #expect(((shown["push"] as? [String: Any])?["schedule"] as? [String: Any])?["time_zone"] as? String == "UTC")
        }
    }
}
