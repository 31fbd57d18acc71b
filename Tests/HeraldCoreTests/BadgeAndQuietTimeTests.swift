import Foundation
import HeraldCore
import Testing

@Suite struct BadgeChangeTests {
    @Test func numbersSetAndSignedTextsChange() throws {
        #expect(try BadgeChange(.int(3), field: "b") == .set(3))
        #expect(try BadgeChange(.string("+2"), field: "b") == .add(2))
        #expect(try BadgeChange(.string("-1"), field: "b") == .add(-1))
        #expect(try BadgeChange(.string("auto"), field: "b") == .add(1))
        #expect(try BadgeChange(.string("AUTO"), field: "b") == .add(1))
    }

    @Test func theResultIsNeverBelowZero() throws {
        #expect(BadgeChange.add(-3).applied(to: 2) == 0)
        #expect(BadgeChange.add(1).applied(to: 4) == 5)
        #expect(BadgeChange.set(7).applied(to: 4) == 7)
    }

    @Test func anythingElseIsRefusedNamingTheField() {
        for bad: JSONValue in [
            .int(-1), .string("+"), .string("3"), .string("+ 3"), .string("+3.5"), .string("++3"), .double(1.5),
            .bool(true), .null, .string("+99999999999999999999"),
        ] {
            #expect(throws: ValidationError.self, "\(bad)") { try BadgeChange(bad, field: "custom.ios.badge") }
            #expect((try? BadgeChange(bad, field: "custom.ios.badge")) == nil)
        }
        do {
            _ = try BadgeChange(.string("lots"), field: "custom.ios.badge")
            Issue.record("accepted")
        } catch {
            #expect(error.field == "custom.ios.badge")
        }
    }
}

@Suite struct QuietTimeTests {
    let paris = TimeZone(identifier: "Europe/Paris")!

    func at(_ text: String) -> Int64 { LocalDateTime(text)!.instant(in: paris) }

    @Test func overMidnight() throws {
        let quiet = try QuietTime(start: "22:00", end: "07:00", field: "quiet_time")
        #expect(quiet.contains(minuteOfDay: 22 * 60))
        #expect(quiet.contains(minuteOfDay: 3 * 60))
        #expect(!quiet.contains(minuteOfDay: 7 * 60))
        #expect(!quiet.contains(minuteOfDay: 12 * 60))
        // 23:30 → tomorrow 07:00; 05:00 → today 07:00; noon → not quiet.
        #expect(quiet.end(around: at("2026-11-25T23:30"), in: paris) == at("2026-11-26T07:00"))
        #expect(quiet.end(around: at("2026-11-26T05:00"), in: paris) == at("2026-11-26T07:00"))
        #expect(quiet.end(around: at("2026-11-26T12:00"), in: paris) == nil)
        // Over the last night of a month and of a year.
        #expect(quiet.end(around: at("2026-12-31T23:00"), in: paris) == at("2027-01-01T07:00"))
    }

    @Test func withinADay() throws {
        let quiet = try QuietTime(start: "13:00", end: "14:30", field: "quiet_time")
        #expect(quiet.end(around: at("2026-11-25T13:59"), in: paris) == at("2026-11-25T14:30"))
        #expect(quiet.end(around: at("2026-11-25T14:30"), in: paris) == nil)
    }

    @Test func acrossDaylightSavingChanges() throws {
        // The night clocks go forward (2026-03-29, 02:00 → 03:00): the night is an hour shorter.
        let quiet = try QuietTime(start: "01:00", end: "04:00", field: "quiet_time")
        let springStart = at("2026-03-29T01:30")
        let springEnd = try #require(quiet.end(around: springStart, in: paris))
        #expect(springEnd - springStart == 90 * 60 * 1000)
        // The night they go back (2026-10-25, 03:00 → 02:00): an hour longer.
        let autumnStart = at("2026-10-25T01:30")
        let autumnEnd = try #require(quiet.end(around: autumnStart, in: paris))
        #expect(autumnEnd - autumnStart == 210 * 60 * 1000)
    }

    @Test func badTimesAreRefusedNamingTheField() {
        for (start, end, field) in [
            ("24:00", "07:00", "quiet_time.start"), ("22:00", "7:00", "quiet_time.end"),
            ("22:60", "07:00", "quiet_time.start"), ("10:00", "10:00", "quiet_time.end"), ("", "07:00", "quiet_time.start"),
        ] {
            do {
                _ = try QuietTime(start: start, end: end, field: "quiet_time")
                Issue.record("accepted \(start)–\(end)")
            } catch {
                #expect(error.field == field, "\(start)–\(end)")
            }
        }
    }
}
