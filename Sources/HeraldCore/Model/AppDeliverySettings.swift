/// An app's delivery defaults for scheduled, throttled and quiet-time pushes.
package struct AppDeliverySettings: Sendable, Equatable {
    /// The IANA zone of devices registered without `time_zone` (`scheduleLocal`).
    package var defaultTimeZone: String
    /// Devices a second for pushes without their own `rate`; nil for no limit.
    package var ratePerSecond: Int?
    /// The quiet time of devices registered without their own `quiet_time`; nil for none.
    package var quietTime: QuietTime?

    package init(defaultTimeZone: String = "UTC", ratePerSecond: Int? = nil, quietTime: QuietTime? = nil) {
        self.defaultTimeZone = defaultTimeZone
        self.ratePerSecond = ratePerSecond
        self.quietTime = quietTime
    }
}
