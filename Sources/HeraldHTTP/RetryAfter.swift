import Foundation
import HeraldCore

/// Reads an HTTP `Retry-After` header (RFC 9110 §10.2.3), or a header of the same form such as
/// WNS's `X-WNS-CONTINUE-AFTER`: a number of seconds, or an HTTP date.
package enum RetryAfter {
    /// How long to wait from `now`, or nil when the header is absent or unreadable.
    package static func delay(_ header: String?, at now: EpochClock.Instant) -> Duration? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = Int64(header) { return .seconds(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: header) else { return nil }
        return max(.zero, now.duration(to: EpochClock.Instant(sinceEpoch: .seconds(Int64(date.timeIntervalSince1970)))))
    }
}
