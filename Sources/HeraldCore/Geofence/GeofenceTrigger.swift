/// When a geofence shows its notification: on entering or on leaving one of its locations.
package enum GeofenceTrigger: String, Sendable, Equatable, CaseIterable {
    case enter
    case exit

    /// Parses `enter` or `exit` (any case).
    package static func parse(_ raw: String, field: String) throws(ValidationError) -> GeofenceTrigger {
        guard let trigger = GeofenceTrigger(rawValue: raw.lowercased()) else {
            throw ValidationError(message: "trigger_type must be enter or exit, not '\(raw)'", field: field)
        }
        return trigger
    }
}
