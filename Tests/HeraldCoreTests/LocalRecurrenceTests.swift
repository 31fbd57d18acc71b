import Foundation
import HeraldCore
import Testing

/// A recurring rule in each device's own local time: its occurrences are floating wall-clock
/// times, each beginning when the earliest zone on Earth (UTC+14) reaches it.
@Suite struct LocalRecurrenceTests {
    func ms(_ iso: String) -> Int64 {
        Int64(ISO8601DateFormatter().date(from: iso)!.timeIntervalSince1970 * 1000)
    }

    func rule(_ cron: String, until: Int64? = nil, count: Int? = nil) throws -> Recurrence {
        Recurrence(cron: try CronExpression(cron, field: "schedule.cron"), timeZone: nil, until: until, count: count, local: true)
    }

    @Test func aWallClockTimeReadsAsANumberAndBack() throws {
        let local = try #require(LocalDateTime("2026-11-23T08:00"))
        #expect(local.floatingMilliseconds == ms("2026-11-23T08:00:00Z"))
        #expect(LocalDateTime(floatingMilliseconds: local.floatingMilliseconds) == local)
        #expect(LocalDateTime(floatingMilliseconds: ms("2028-02-29T23:59:59Z"))?.description == "2028-02-29T23:59:59")
    }

    @Test func anOccurrenceBeginsWhenTheEarliestZoneReachesIt() throws {
        let local = try #require(LocalDateTime("2026-11-23T08:00"))
        // The first of the slots a `scheduleLocal` push would have: 08:00 at UTC+14.
        #expect(Recurrence.beginning(of: local) == PushSchedule.slots(for: local, defaultZone: "UTC").first?.dueAt)
        #expect(Recurrence.beginning(of: local) == ms("2026-11-22T18:00:00Z"))
    }

    @Test func weekdayMorningsBeginTheEveningBeforeInUTC() throws {
        let weekdays = try rule("0 8 * * MON-FRI")
        // Friday 20 November, noon UTC: Friday's 08:00 began on Thursday; next is Monday's.
        let first = try #require(weekdays.nextLocal(after: ms("2026-11-20T12:00:00Z")))
        #expect(first.localTime.description == "2026-11-23T08:00:00")
        #expect(first.beginsAt == ms("2026-11-22T18:00:00Z"))
        // Just before it begins, and just after.
        #expect(weekdays.nextLocal(after: ms("2026-11-22T17:59:59Z"))?.localTime == first.localTime)
        #expect(weekdays.nextLocal(after: ms("2026-11-22T18:00:00Z"))?.localTime.description == "2026-11-24T08:00:00")
        let five = weekdays.localOccurrences(from: first, fired: 0, limit: 5).map(\.localTime.description)
        #expect(five == ["23", "24", "25", "26", "27"].map { "2026-11-\($0)T08:00:00" })
        // `count` left after those fired, and `until` on when an occurrence begins.
        #expect(try rule("0 8 * * MON-FRI", count: 3).localOccurrences(from: first, fired: 1, limit: 5).count == 2)
        let bounded = try rule("0 8 * * MON-FRI", until: ms("2026-11-23T18:00:00Z"))
        #expect(bounded.nextLocal(after: first.localTime)?.beginsAt == ms("2026-11-23T18:00:00Z"))
        #expect(bounded.nextLocal(after: try #require(LocalDateTime("2026-11-24T08:00"))) == nil)
    }

    @Test func aMinutelyRuleBeginsEachMinuteInTurn() throws {
        let minutely = try rule("* * * * *")
        var next = try #require(minutely.nextLocal(after: ms("2026-03-29T00:00:30Z")))
        // 14:01 at UTC+14 is 00:01 UTC.
        #expect(next.localTime.description == "2026-03-29T14:01:00")
        #expect(next.beginsAt == ms("2026-03-29T00:01:00Z"))
        for _ in 0..<10 {
            let following = try #require(minutely.nextLocal(after: next.localTime))
            #expect(following.beginsAt == next.beginsAt + 60_000)
            next = following
        }
    }
}
