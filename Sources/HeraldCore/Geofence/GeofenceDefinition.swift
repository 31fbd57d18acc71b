/// What a geofence says and whom it is for, without its identity: a validated create, or a stored
/// geofence with an update applied.
package struct GeofenceDefinition: Sendable, Equatable {
    package var platform: GeofencePlatform
    package var triggerType: GeofenceTrigger
    /// Milliseconds since 1970; 0 for "from now".
    package var startTime: Int64
    /// Milliseconds since 1970, after `startTime`.
    package var expiryTime: Int64
    /// The local notification per platform (`ios`, `android`), as given.
    package var data: [String: JSONValue]
    /// Lower-case, without duplicates; empty for every device of the platform.
    package var tags: [String]
    /// Without duplicates, in the order given.
    package var locationIDs: [Int64]

    package init(
        platform: GeofencePlatform, triggerType: GeofenceTrigger, startTime: Int64, expiryTime: Int64,
        data: [String: JSONValue], tags: [String], locationIDs: [Int64]
    ) {
        self.platform = platform
        self.triggerType = triggerType
        self.startTime = startTime
        self.expiryTime = expiryTime
        self.data = data
        self.tags = tags
        self.locationIDs = locationIDs
    }

    /// Checks what single fields cannot: the times against each other and the clock, and that
    /// `data` holds what the SDKs of the geofence's platforms need.
    ///
    /// - Parameters:
    ///   - now: epoch milliseconds.
    ///   - expiryChanged: whether this create or update sets `expiry_time` (an update of another
    ///     field of an expired geofence is not refused for being expired).
    package func validate(now: Int64, expiryChanged: Bool) throws(ValidationError) {
        guard !locationIDs.isEmpty else {
            throw ValidationError(code: "missing_field", message: "a geofence needs at least one location", field: "locations")
        }
        guard expiryTime > startTime else {
            throw ValidationError(
                code: "invalid_range",
                message: "expiry_time (\(expiryTime)) must be after start_time (\(startTime)); both are epoch milliseconds",
                field: "expiry_time")
        }
        if expiryChanged && expiryTime <= now {
            let hint = expiryTime < 100_000_000_000 ? "; it looks like seconds, and the API takes milliseconds" : ""
            throw ValidationError(code: "in_the_past", message: "expiry_time \(expiryTime) is in the past\(hint)", field: "expiry_time")
        }
        if platform.includes(.ios) {
            guard data["ios"]?.objectValue != nil else {
                throw ValidationError(
                    code: "missing_field",
                    message:
                        "data.ios (an object, the local notification) is required for an iOS geofence: the iOS SDK ignores a geofence without it",
                    field: "data.ios")
            }
        }
        if platform.includes(.android) {
            let android = data["android"]?.objectValue ?? data["androidFcm"]?.objectValue ?? [:]
            guard android.contains(where: { $0.value != .null }) else {
                throw ValidationError(
                    code: "missing_field",
                    message:
                        "data.android (an object with at least one key) is required for an Android geofence: the Android SDK ignores a geofence without it",
                    field: "data.android")
            }
        }
        let size = JSONValue.object(data).jsonText.utf8.count
        guard size <= Limits.geofenceDataBytes else {
            throw ValidationError(
                code: "limit_exceeded", message: "data is \(size) bytes of JSON; at most \(Limits.geofenceDataBytes)", field: "data")
        }
    }

    /// Whether devices of `type` with `deviceTags` monitor the geofence (its time window aside).
    package func reaches(_ type: PlatformType, deviceTags: Set<String>) -> Bool {
        platform.includes(type) && (tags.isEmpty || tags.contains(where: deviceTags.contains))
    }

    /// `data` as the SDK of `type` reads it: `ios` for iOS; for Android `android` (the GCM-era
    /// SDK) and `androidFcm` (the FCM SDK), each a map of strings, as both parse it.
    package func deviceData(for type: PlatformType) -> [String: JSONValue] {
        switch type {
        case .ios:
            guard var ios = data["ios"]?.objectValue else { return [:] }
            // The API documents `applicationBadgeNumber`; the iOS SDK reads `applicationIconBadgeNumber`.
            if ios["applicationIconBadgeNumber"] == nil, let badge = ios["applicationBadgeNumber"] {
                ios["applicationIconBadgeNumber"] = badge
            }
            return ["ios": .object(ios)]
        case .android:
            guard let legacy = data["android"] ?? data["androidFcm"], let fcm = data["androidFcm"] ?? data["android"] else {
                return [:]
            }
            return ["android": Self.strings(legacy), "androidFcm": Self.strings(fcm)]
        case .web, .windows:
            return [:]
        }
    }

    /// An object's values as strings (numbers and booleans as their JSON text, objects and arrays
    /// JSON-encoded, nulls left out): the Android SDKs read `Map<String, String>`.
    static func strings(_ value: JSONValue) -> JSONValue {
        guard let members = value.objectValue else { return .object([:]) }
        var out: [String: JSONValue] = [:]
        for (key, member) in members {
            switch member {
            case .null: continue
            case .string: out[key] = member
            default: out[key] = .string(member.jsonText)
            }
        }
        return .object(out)
    }
}
