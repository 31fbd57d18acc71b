import struct Foundation.Calendar
import struct Foundation.DateComponents
import struct Foundation.TimeZone

/// A wall-clock time without a zone (`scheduleLocal`: `2026-12-24T09:00` or `…T09:00:30`),
/// which becomes an instant only in a device's time zone.
package struct LocalDateTime: Sendable, Equatable, Hashable, CustomStringConvertible {
    package var year: Int
    package var month: Int
    package var day: Int
    package var hour: Int
    package var minute: Int
    package var second: Int

    /// Parses `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS`; nil for anything else, an offset or a
    /// `Z` included (the point is that there is none).
    package init?(_ text: String) {
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        let time = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard date.count == 3, date[0].count == 4, date[1].count == 2, date[2].count == 2,
            time.count == 2 || time.count == 3, time.allSatisfy({ $0.count == 2 })
        else { return nil }
        let numbers = (date + time).map { part in part.allSatisfy(\.isASCII) ? Int(part) : nil }
        guard numbers.allSatisfy({ $0 != nil }) else { return nil }
        let values = numbers.map { $0 ?? 0 }
        self.init(
            year: values[0], month: values[1], day: values[2], hour: values[3], minute: values[4],
            second: values.count == 6 ? values[5] : 0)
    }

    package var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))"
    }

    /// The instant (epoch ms) this wall-clock time is in `zone`. A time skipped by a daylight-saving
    /// change is the first instant after the gap.
    package func instant(in zone: TimeZone) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let date = calendar.date(from: components) else {
            // Only an impossible date gets here, and init refuses those; fall back to UTC's reading.
            return Int64(Self.daysFromEpoch(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1000
        }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The wall-clock time read as if it were UTC, in epoch milliseconds: a floating time as a
    /// number, to compare, step and hand to `CronExpression` in UTC (which has no daylight-saving
    /// changes, so every wall-clock time occurs there exactly once).
    package var floatingMilliseconds: Int64 {
        Int64(Self.daysFromEpoch(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second) * 1000
    }

    /// The wall-clock time whose `floatingMilliseconds` is `floating` (to the second); nil
    /// outside the years 1970 to 9999.
    package init?(floatingMilliseconds floating: Int64) {
        guard floating >= 0 else { return nil }
        let seconds = floating / 1000
        let (year, month, day) = Self.civil(fromDaysSinceEpoch: Int(seconds / 86_400))
        let time = Int(seconds % 86_400)
        self.init(year: year, month: month, day: day, hour: time / 3600, minute: time % 3600 / 60, second: time % 60)
    }

    static func days(inMonth month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// A valid wall-clock time from its parts; nil for a date or time that does not exist.
    package init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int = 0) {
        guard (1970...9999).contains(year), (1...12).contains(month), (1...Self.days(inMonth: month, year: year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// The date `days` after 1970-01-01 in the proleptic Gregorian calendar (the inverse of
    /// `daysFromEpoch`).
    static func civil(fromDaysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days from 1970-01-01 to the date in the proleptic Gregorian calendar.
    static func daysFromEpoch(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
