/// The silent push that tells devices their geofences changed, so that they fetch
/// `GET /v1/geofences`: `pivotal.push.geofence_update_available` with `content-available` on
/// iOS (the SDK wants both), a data-only message on Android.
package enum GeofenceUpdatePush {
    /// The key both PCF SDKs look for.
    package static let key = "pivotal.push.geofence_update_available"

    /// The push for `audience`, as a validated push (Herald builds it, nobody sends it as a
    /// request): the audience's platforms (none named: every platform, as in a request), and its
    /// topics unless it is everyone on them.
    package static func push(for audience: GeofenceAudience) -> Push {
        let custom: [String: JSONValue] = [
            "ios": .object(["content-available": .bool(true), "extra": .object([key: .bool(true)])]),
            "android": .object([key: .string("true"), "notification": .bool(false)]),
        ]
        return Push(
            body: nil, custom: custom,
            audience: .selection(
                platforms: audience.platforms.isEmpty ? nil : audience.platforms, topics: audience.everyone ? [] : audience.topics.sorted(),
                customUserIDs: [],
                interactiveOnly: false),
            expiresAt: nil, scheduledAt: nil, validateOnly: false)
    }
}
