/// One event a device reported, validated, its time in epoch milliseconds.
public struct AnalyticsEvent: Sendable, Equatable {
    /// One of `AnalyticsEventType`'s, or any other type an SDK sends.
    public var type: String
    /// Epoch milliseconds (the iOS SDK sends milliseconds, the Android SDK seconds; both end up here).
    public var time: Int64
    /// The push's receipt id, lower-cased.
    public var receiptID: String?
    public var deviceUUID: String?
    public var geofenceID: String?
    public var locationID: String?
    public var sdkVersion: String?
    /// As the SDK named it (`ios`, `android`).
    public var platformType: String?

    public init(
        type: String, time: Int64, receiptID: String? = nil, deviceUUID: String? = nil, geofenceID: String? = nil,
        locationID: String? = nil, sdkVersion: String? = nil, platformType: String? = nil
    ) {
        self.type = type
        self.time = time
        self.receiptID = receiptID
        self.deviceUUID = deviceUUID
        self.geofenceID = geofenceID
        self.locationID = locationID
        self.sdkVersion = sdkVersion
        self.platformType = platformType
    }

    /// Below this an event time is taken as seconds: 10¹¹ seconds is the year 5138, 10¹¹
    /// milliseconds March 1973, so the two cannot be confused for any real event.
    public static let secondsThreshold: Int64 = 100_000_000_000

    /// An event time in epoch milliseconds, from seconds or milliseconds (told apart by magnitude).
    public static func normalizedTime(_ raw: Int64) -> Int64 {
        raw < secondsThreshold ? raw * 1000 : raw
    }

    /// The hour the event falls in, as epoch milliseconds of its start (UTC).
    public var hour: Int64 {
        let hour: Int64 = 3_600_000
        return time >= 0 ? time / hour * hour : (time - hour + 1) / hour * hour
    }
}

extension Limits {
    /// Events one `POST /v1/analytics` may carry.
    public static let analyticsEventsPerBatch = 1000
    /// Characters in one analytics field.
    public static let analyticsFieldLength = 255
}
