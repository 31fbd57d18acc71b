import struct Foundation.Calendar
import struct Foundation.Date
import struct Foundation.TimeZone

/// A device's daily quiet time (`quiet_time: {"start": "22:00", "end": "07:00"}`), in its own
/// time zone; it may run over midnight.
package struct QuietTime: Sendable, Hashable {
    /// Minutes after local midnight it starts (inclusive) and ends (exclusive).
    package let start: Int
    package let end: Int

    /// Reads `HH:MM` times; errors name `field.start` / `field.end`.
    package init(start: String, end: String, field: String) throws(ValidationError) {
        self.start = try Self.minutes(start, field: field + ".start")
        self.end = try Self.minutes(end, field: field + ".end")
        guard self.start != self.end else {
            throw ValidationError(message: "a quiet time must end at another time than it starts", field: field + ".end")
        }
    }

    /// Whether the local time `minuteOfDay` (0–1439) is quiet.
    package func contains(minuteOfDay: Int) -> Bool {
        start < end ? (start..<end).contains(minuteOfDay) : minuteOfDay >= start || minuteOfDay < end
    }

    /// When the quiet time around `instant` (epoch ms) ends in `zone`, in epoch ms; nil when
    /// `instant` is not in quiet time. The end is a wall-clock time, so a daylight-saving change
    /// moves it as `LocalDateTime` does.
    package func end(around instant: Int64, in zone: TimeZone) -> Int64? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: Double(instant) / 1000))
        guard let year = parts.year, let month = parts.month, let day = parts.day, let hour = parts.hour, let minute = parts.minute
        else { return nil }
        let now = hour * 60 + minute
        guard contains(minuteOfDay: now) else { return nil }
        // The end is today, unless it comes after midnight and the quiet time began today.
        var date = (year, month, day)
        if start > end, now >= start {
            let next = LocalDateTime.civil(fromDaysSinceEpoch: LocalDateTime.daysFromEpoch(year, month, day) + 1)
            date = (next.year, next.month, next.day)
        }
        guard let local = LocalDateTime(year: date.0, month: date.1, day: date.2, hour: end / 60, minute: end % 60) else { return nil }
        return local.instant(in: zone)
    }

    private static func minutes(_ text: String, field: String) throws(ValidationError) -> Int {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
        else {
            throw ValidationError(message: "'\(text)' is not a time of day as HH:MM (00:00 to 23:59)", field: field)
        }
        return hour * 60 + minute
    }
}

/// What quiet time means for one push (`"quiet_time"`).
package enum QuietTimePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Delivered when the device's quiet time ends.
    case hold
    /// Delivered now, without sound or banner where the platform allows.
    case silent
    /// Delivered now as usual (the default).
    case ignore
}
