/// The devices a geofence is for: the Pivotal API's `platform` of a geofence.
package enum GeofencePlatform: String, Sendable, Equatable, CaseIterable {
    case ios
    case android
    case all

    /// Parses `android`, `ios` or `all` (any case).
    package static func parse(_ raw: String, field: String) throws(ValidationError) -> GeofencePlatform {
        guard let platform = GeofencePlatform(rawValue: raw.lowercased()) else {
            throw ValidationError(message: "platform must be android, ios or all, not '\(raw)'", field: field)
        }
        return platform
    }

    /// The device platforms the geofence reaches (web and Windows devices have no geofences).
    package var platformTypes: [PlatformType] {
        switch self {
        case .ios: [.ios]
        case .android: [.android]
        case .all: [.android, .ios]
        }
    }

    /// Whether devices of `type` monitor the geofence.
    package func includes(_ type: PlatformType) -> Bool {
        platformTypes.contains(type)
    }
}
