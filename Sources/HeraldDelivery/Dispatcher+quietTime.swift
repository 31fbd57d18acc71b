import HeraldCore
import HeraldStore
import struct Foundation.TimeZone
import struct Foundation.UUID

extension Dispatcher {
    // MARK: Quiet time

    /// The devices among `targets` in their quiet time at `now` (epoch ms) → when it ends.
    ///
    /// A device without its own quiet time has the app's (`AppDeliverySettings.quietTime`), and
    /// one without a time zone the app's default zone, as `scheduleLocal` reads it; a device with
    /// neither quiet time is never quiet. The end is a wall-clock time in the device's zone, so a
    /// daylight-saving change in between moves it (`QuietTime.end(around:in:)`).
    func quietTimeEnds(_ targets: [DeliveryTarget], applicationID: UUID, now: Int64) async throws -> [Int64: Int64] {
        let settings = try await store.deliverySettings.find(applicationID: applicationID)
        var zones: [String: TimeZone] = [:]
        var ends: [Int64: Int64] = [:]
        for target in targets {
            guard let quiet = target.quietTime ?? settings.quietTime else { continue }
            let name = target.timeZone ?? settings.defaultTimeZone
            if zones[name] == nil { zones[name] = TimeZone(identifier: name) }
            // A zone Foundation no longer knows (checked when it was registered): not quiet.
            guard let zone = zones[name], let end = quiet.end(around: now, in: zone), end > now else { continue }
            ends[target.id] = end
        }
        return ends
    }
}
