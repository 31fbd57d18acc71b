/// When geofence changes are pushed to devices: one silent push per application, sent once the
/// edits have settled, so that a burst of edits makes one push per device.
package struct GeofenceUpdatePolicy: Sendable, Equatable {
    /// How long after the last edit the push goes out (ms); each edit pushes it back.
    package var delay: Int64
    /// How long after the first edit of a burst the push goes out at the latest (ms), so that
    /// edits that never stop still reach devices.
    package var maximumDelay: Int64

    package init(delay: Int64 = 3_000, maximumDelay: Int64 = 30_000) {
        self.delay = delay
        self.maximumDelay = max(delay, maximumDelay)
    }
}
