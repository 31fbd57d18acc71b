/// An app's delivery defaults for scheduled and throttled pushes.
public struct AppDeliverySettings: Sendable, Equatable {
    /// The IANA zone of devices registered without `time_zone` (`scheduleLocal`).
    public var defaultTimeZone: String
    /// Devices a second for pushes without their own `rate`; nil for no limit.
    public var ratePerSecond: Int?

    public init(defaultTimeZone: String = "UTC", ratePerSecond: Int? = nil) {
        self.defaultTimeZone = defaultTimeZone
        self.ratePerSecond = ratePerSecond
    }
}
