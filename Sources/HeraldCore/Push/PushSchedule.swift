import struct Foundation.TimeZone

/// When a validated push goes out: now, at one instant, or at a wall-clock time in each device's
/// own time zone.
package enum PushSchedule: Sendable, Equatable {
    case now
    /// Epoch milliseconds.
    case at(Int64)
    case local(LocalDateTime)
    /// Every occurrence of a recurring rule, each its own push.
    case recurring(Recurrence)

    /// One firing of a local-time schedule: the instant, and the zones whose devices it reaches
    /// (`""` stands for devices without a zone when the app's default zone is in the group).
    package struct Slot: Sendable, Equatable {
        package var dueAt: Int64
        package var timeZones: [String]

        package init(dueAt: Int64, timeZones: [String]) {
            self.dueAt = dueAt
            self.timeZones = timeZones
        }
    }

    /// Decides when `push` is sent, received at `now` (epoch ms, as the push keeps its times): a
    /// time that is past or less than `sendImmediatelyWithin` away is sent now, as the Pivotal
    /// server does. A recurring push is always a schedule.
    package static func of(_ push: Push, now: Int64, sendImmediatelyWithin: Duration) -> PushSchedule {
        if let recurrence = push.recurrence { return .recurring(recurrence) }
        if let local = push.localTime { return .local(local) }
        guard let at = push.scheduledAt, Duration.milliseconds(at - now) > sendImmediatelyWithin else { return .now }
        return .at(at)
    }

    /// The slots of a local-time schedule: every known time zone (and so every device, whatever
    /// zone it registers with later) grouped by the instant `local` falls on there. Devices
    /// without a zone go with the group of `defaultZone`.
    package static func slots(for local: LocalDateTime, defaultZone: String, zones: [String] = TimeZone.knownTimeZoneIdentifiers) -> [Slot]
    {
        var byInstant: [Int64: [String]] = [:]
        var all = Set(zones)
        all.insert("UTC")
        all.insert(defaultZone)
        for identifier in all {
            guard let zone = TimeZone(identifier: identifier) else { continue }
            byInstant[local.instant(in: zone), default: []].append(identifier)
        }
        let defaultInstant = TimeZone(identifier: defaultZone).map(local.instant(in:))
        return byInstant.keys.sorted().map { instant in
            var names = (byInstant[instant] ?? []).sorted()
            if instant == defaultInstant { names.insert("", at: 0) }
            return Slot(dueAt: instant, timeZones: names)
        }
    }

    /// Whether `identifier` names a time zone Foundation knows (IANA, e.g. `Europe/Paris`).
    package static func isTimeZone(_ identifier: String) -> Bool {
        !identifier.isEmpty && identifier.count <= 64 && !identifier.contains(",") && TimeZone(identifier: identifier) != nil
    }
}
