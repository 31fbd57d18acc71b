/// The silent push that tells devices their geofences changed, so that they fetch
/// `GET /v1/geofences`: `pivotal.push.geofence_update_available` with `content-available` on
/// iOS (the SDK wants both), a data-only message on Android.
public enum GeofenceUpdatePush {
    /// The key both PCF SDKs look for.
    public static let key = "pivotal.push.geofence_update_available"

    /// The `POST /v1/push` body of the push for `audience`.
    public static func request(for audience: GeofenceAudience) -> String {
        var target: [String: JSONValue] = [
            "platforms": .array(audience.platforms.map(\.rawValue).sorted().map(JSONValue.string))
        ]
        if !audience.everyone {
            target["topics"] = .array(audience.topics.sorted().map(JSONValue.string))
        }
        let custom: [String: JSONValue] = [
            "ios": .object(["content-available": .bool(true), "extra": .object([key: .bool(true)])]),
            "android": .object([key: .string("true"), "notification": .bool(false)]),
        ]
        return JSONValue.object(["message": .object(["custom": .object(custom)]), "target": .object(target)]).jsonText
    }
}
