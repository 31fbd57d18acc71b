/// One event a device reported, validated, its time in epoch milliseconds.
package struct AnalyticsEvent: Sendable, Equatable {
    /// One of `AnalyticsEventType`'s, or any other type an SDK sends.
    package var type: String
    /// Epoch milliseconds (the iOS SDK sends milliseconds, the Android SDK seconds; both end up here).
    package var time: Int64
    /// The push's receipt id, lower-cased.
    package var receiptID: String?
    package var deviceUUID: String?
    package var geofenceID: String?
    package var locationID: String?
    package var sdkVersion: String?
    /// As the SDK named it (`ios`, `android`).
    package var platformType: String?

    package init(
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
    package static let secondsThreshold: Int64 = 100_000_000_000

    /// An event time in epoch milliseconds, from seconds or milliseconds (told apart by magnitude).
    package static func normalizedTime(_ raw: Int64) -> Int64 {
        raw < secondsThreshold ? raw * 1000 : raw
    }

    /// The hour the event falls in, as epoch milliseconds of its start (UTC).
    package var hour: Int64 {
        let hour: Int64 = 3_600_000
        return time >= 0 ? time / hour * hour : (time - hour + 1) / hour * hour
    }
}

extension Limits {
    /// Events one `POST /v1/analytics` may carry.
    package static let analyticsEventsPerBatch = 1000
    /// Characters in one analytics field.
    package static let analyticsFieldLength = 255
}
