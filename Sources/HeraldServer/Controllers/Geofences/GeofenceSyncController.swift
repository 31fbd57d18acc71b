import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// `GET /v1/geofences?timestamp&device_uuid&platform`: what a device fetches after a
/// geofence-update push, with platform credentials (the PCF SDKs' geofence updaters).
struct GeofenceSyncController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    func addRoutes(to router: Router<Context>) {
        router.get("v1/geofences", use: sync)
    }

    struct Answer: ResponseEncodable {
        var num: Int
        var lastModified: Int64
        var geofences: [GeofenceView]
        var deletedGeofenceIDs: [Int64]

        enum CodingKeys: String, CodingKey {
            case num, geofences
            case lastModified = "last_modified"
            case deletedGeofenceIDs = "deleted_geofence_ids"
        }
    }

    @Sendable func sync(_ request: Request, context: Context) async throws -> Answer {
        let platform = try await auth.platform(request)
        let parameters = request.uri.queryParameters
        var since: Int64 = 0
        if let raw = parameters.get("timestamp"), !raw.isEmpty {
            guard let timestamp = Int64(raw), timestamp >= 0 else {
                throw APIError.badRequest("timestamp is epoch milliseconds, a whole number of at least 0", field: "timestamp")
            }
            since = timestamp
        }
        if let raw = parameters.get("platform"), !raw.isEmpty {
            // The iOS SDK sends `ios`, the Android SDKs `android` (GCM) or `android-fcm`.
            let named: PlatformType
            if raw.lowercased() == "android-fcm" {
                named = .android
            } else {
                named = try PlatformType.parse(raw, field: "platform")
            }
            guard named == platform.type else {
                throw APIError(
                    ValidationError(
                        code: "platform_mismatch",
                        message: "platform '\(raw)' does not match these credentials, which are of a '\(platform.type.rawValue)' platform",
                        field: "platform"))
            }
        }
        guard let raw = parameters.get("device_uuid"), !raw.isEmpty else {
            throw APIError.badRequest("device_uuid is required", field: "device_uuid", code: "missing_field")
        }
        guard let uuid = UUID(text: raw), let device = try await store.devices.find(platformID: platform.id, uuid: uuid) else {
            throw APIError.notFound("device")
        }
        let result = try await store.geofences.sync(device: device, since: since)
        return Answer(
            num: result.geofences.count, lastModified: result.lastModified,
            geofences: result.geofences.map { GeofenceView($0, data: $0.definition.deviceData(for: device.platformType)) },
            deletedGeofenceIDs: result.deletedIDs)
    }
}
