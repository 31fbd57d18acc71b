import HeraldCore
import HeraldStore

import struct Foundation.TimeZone

extension DeliveryPlan {
    // MARK: Quiet time

    /// The devices among `targets` in their quiet time at `now` → when it ends.
    ///
    /// A device without its own quiet time has the app's (`AppDeliverySettings.quietTime`), and
    /// one without a time zone the app's default zone, as `scheduleLocal` reads it; a device with
    /// neither quiet time is never quiet. The end is a wall-clock time in the device's zone, so a
    /// daylight-saving change in between moves it (`QuietTime.end(around:in:)`).
    static func quietTimeEnds(
        _ targets: [DeliveryTarget], settings: AppDeliverySettings, now: EpochClock.Instant
    ) -> [Int64: EpochClock.Instant] {
        let time = now.epochMilliseconds
        var zones: [String: TimeZone] = [:]
        var ends: [Int64: EpochClock.Instant] = [:]
        for target in targets {
            guard let quiet = target.quietTime ?? settings.quietTime else { continue }
            let name = target.timeZone ?? settings.defaultTimeZone
            if zones[name] == nil { zones[name] = TimeZone(identifier: name) }
            // A zone Foundation no longer knows (checked when it was registered): not quiet.
            guard let zone = zones[name], let end = quiet.end(around: time, in: zone), end > time else { continue }
            ends[target.id] = EpochClock.Instant(epochMilliseconds: end)
        }
        return ends
    }
}
