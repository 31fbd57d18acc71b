import Foundation
import Testing

@testable import HeraldCore

@Suite struct CronExpressionTests {
    let paris = TimeZone(identifier: "Europe/Paris")!
    let utc = TimeZone(identifier: "UTC")!

    /// Epoch milliseconds of a wall-clock time in `zone` (via `LocalDateTime`, the one rule).
    func at(_ text: String, _ zone: TimeZone) -> Int64 {
        LocalDateTime(text)!.instant(in: zone)
    }

    /// The next `count` occurrences after `start`, as UTC ISO texts.
    func occurrences(_ cron: String, after start: Int64, in zone: TimeZone, count: Int = 3) throws -> [String] {
        let expression = try CronExpression(cron, field: "schedule.cron")
        var out: [String] = []
        var last = start
        for _ in 0..<count {
            guard let next = expression.nextOccurrence(after: last, in: zone) else { break }
            out.append(Self.iso(next))
            last = next
        }
        return out
    }

    static func iso(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    func refusal(_ cron: String) -> ValidationError? {
        do {
            _ = try CronExpression(cron, field: "schedule.cron")
            return nil
        } catch {
            return error
        }
    }

    // MARK: Reading

    @Test func weekdayMorningsInParis() throws {
        // Friday 2026-11-27 07:59 Paris (UTC+1): Friday 08:00, then Monday and Tuesday.
        #expect(
            try occurrences("0 8 * * MON-FRI", after: at("2026-11-27T07:59", paris), in: paris)
                == ["2026-11-27T07:00:00Z", "2026-11-30T07:00:00Z", "2026-12-01T07:00:00Z"])
    }

    @Test func listsRangesStepsAndNames() throws {
        #expect(
            try occurrences("*/20 9-10 * * *", after: at("2026-01-05T09:30", utc), in: utc, count: 4)
                == ["2026-01-05T09:40:00Z", "2026-01-05T10:00:00Z", "2026-01-05T10:20:00Z", "2026-01-05T10:40:00Z"])
        #expect(
            try occurrences("15 12 1,15 jan,Jul *", after: at("2026-01-10T00:00", utc), in: utc)
                == ["2026-01-15T12:15:00Z", "2026-07-01T12:15:00Z", "2026-07-15T12:15:00Z"])
        // `a/n`: from a to the end of the field.
        #expect(
            try occurrences("50/5 0 * * *", after: at("2026-03-01T00:00", utc), in: utc) == [
                "2026-03-01T00:50:00Z", "2026-03-01T00:55:00Z", "2026-03-02T00:50:00Z",
            ])
        // 7 is Sunday, like 0.
        #expect(try occurrences("0 0 * * 7", after: at("2026-11-25T00:00", utc), in: utc, count: 1) == ["2026-11-29T00:00:00Z"])
        #expect(try occurrences("@monthly", after: at("2026-11-25T00:00", utc), in: utc, count: 1) == ["2026-12-01T00:00:00Z"])
    }

    @Test func bothDayFieldsRestrictedMatchEither() throws {
        // The 13th, or any Friday (cron's rule since Vixie).
        #expect(
            try occurrences("0 0 13 * FRI", after: at("2026-11-01T00:00", utc), in: utc, count: 4)
                == ["2026-11-06T00:00:00Z", "2026-11-13T00:00:00Z", "2026-11-20T00:00:00Z", "2026-11-27T00:00:00Z"])
    }

    @Test func aLeapDayComesEveryFourYears() throws {
        #expect(
            try occurrences("0 0 29 2 *", after: at("2026-01-01T00:00", utc), in: utc, count: 2) == [
                "2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z",
            ])
    }

    // MARK: Daylight-saving changes

    @Test func aTimeSkippedInSpringFiresOnceAfterTheGap() throws {
        // Paris, 2026-03-29: 02:00 → 03:00. 02:30 does not exist that day.
        let fired = try occurrences("30 2 * * *", after: at("2026-03-28T00:00", paris), in: paris, count: 3)
        #expect(fired[0] == "2026-03-28T01:30:00Z")  // 02:30 CET
        #expect(fired[1] == "2026-03-29T01:30:00Z")  // the first instant after the gap, 03:30 CEST
        #expect(fired[2] == "2026-03-30T00:30:00Z")  // 02:30 CEST
    }

    @Test func aTimeRepeatedInAutumnFiresOnce() throws {
        // Paris, 2026-10-25: 03:00 CEST → 02:00 CET. 02:30 comes twice; it fires at the first.
        let fired = try occurrences("30 2 * * *", after: at("2026-10-24T12:00", paris), in: paris, count: 3)
        #expect(fired == ["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"])
        // Every 30 minutes through the repeated hour: each wall-clock time once.
        let halfHours = try occurrences("*/30 * * * *", after: at("2026-10-25T01:45", paris), in: paris, count: 4)
        #expect(halfHours == ["2026-10-25T00:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z", "2026-10-25T02:30:00Z"])
    }

    // MARK: Cost

    /// A minutely rule walked through a day converts one wall-clock time per occurrence in UTC,
    /// and in Paris, on the day clocks go back, at most an hour's worth (the times the change
    /// may still put before `after`), not a day's; the walk skips the repeated hour once.
    @Test func aMinutelyRuleConvertsOnlyTheMinutesThatCanComeNext() throws {
        let minutely = try CronExpression("* * * * *", field: "schedule.cron")
        var last = at("2026-06-01T00:00", utc)
        for _ in 0..<1440 {
            var conversions = 0
            let next = try #require(minutely.nextOccurrence(after: last, in: utc, conversions: &conversions))
            #expect(next == last + 60_000)
            #expect(conversions == 1)
            last = next
        }
        last = at("2026-10-24T12:00", paris)
        var steps: [Int64: Int] = [:]
        var most = 0
        for _ in 0..<1440 {
            var conversions = 0
            let next = try #require(minutely.nextOccurrence(after: last, in: paris, conversions: &conversions))
            steps[next - last, default: 0] += 1
            most = max(most, conversions)
            last = next
        }
        // 02:59 CEST is followed by 03:00 CET, 61 minutes later; every other step is a minute.
        #expect(steps == [60_000: 1439, 3_660_000: 1])
        #expect(most <= 61)
    }

    // MARK: Refusals

    @Test func badExpressionsAreRefusedNamingTheField() {
        for bad in [
            "", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8",
            "*/0 * * * *", "5-1 * * * *", "a * * * *", "1,,2 * * * *", "* * 31 2 *", "* * 30,31 feb *", "1-2-3 * * * *",
            "*/5/2 * * * *", "@fortnightly",
        ] {
            let error = refusal(bad)
            #expect(error?.field == "schedule.cron", "\(bad)")
            #expect(error?.code == "invalid_cron", "\(bad)")
        }
        // February 30 with a weekday restriction still fires on that weekday.
        #expect(refusal("0 0 30 2 MON") == nil)
    }
}
