import HeraldCore
import HeraldStore
import Hummingbird
import struct Foundation.UUID

/// `GET`/`PUT /admin/v1/apps/:app/devices/:device/quiet_time`: a device's own quiet time (in
/// its `time_zone`), read, set or removed (`null`: the app's default applies) with a bearer
/// admin token.
struct DeviceQuietTimeController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    func addRoutes(to router: Router<Context>) {
        router.get("admin/v1/apps/:app/devices/:device/quiet_time", use: get)
        router.put("admin/v1/apps/:app/devices/:device/quiet_time", use: update)
    }

    struct QuietTimeView: ResponseEncodable {
        var deviceUUID: String
        var timeZone: String?
        var quietTime: QuietTime?

        enum CodingKeys: String, CodingKey {
            case deviceUUID = "device_uuid", timeZone = "time_zone", quietTime = "quiet_time"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(deviceUUID, forKey: .deviceUUID)
            // null (not absent): the device has none of its own.
            try container.encode(timeZone, forKey: .timeZone)
            try container.encode(quietTime?.json ?? .null, forKey: .quietTime)
        }
    }

    /// The body of a `PUT`: `{"quiet_time": {"start": "22:00", "end": "07:00"}}`, or null.
    struct QuietTimeInput: Decodable {
        var quietTime: JSONValue?

        enum CodingKeys: String, CodingKey {
            case quietTime = "quiet_time"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            quietTime = try container.decodeJSONIfPresent(forKey: .quietTime)
        }
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> QuietTimeView {
        let (uuid, found) = try await device(request, context)
        return QuietTimeView(deviceUUID: uuid.lowercasedString, timeZone: found.timeZone, quietTime: found.quietTime)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> QuietTimeView {
        var request = request
        let (uuid, found) = try await device(request, context)
        let input = try await request.decodeJSON(QuietTimeInput.self)
        let change = try QuietTime.change(input.quietTime, field: "quiet_time")
        if case .unchanged = change {
            throw APIError.badRequest(
                "quiet_time is required: {\"start\": \"HH:MM\", \"end\": \"HH:MM\"}, or null to remove it", field: "quiet_time")
        }
        try await store.devices.setQuietTime(change, deviceID: found.deviceID)
        return QuietTimeView(deviceUUID: uuid.lowercasedString, timeZone: found.timeZone, quietTime: change.applied(to: found.quietTime))
    }

    /// The app's device named in the path; not found for another tenant's app or another app's device.
    private func device(
        _ request: Request, _ context: Context
    ) async throws -> (UUID, (deviceID: Int64, timeZone: String?, quietTime: QuietTime?)) {
        let app = try await AdminScope.application(request, context, auth: auth, store: store)
        guard let raw = context.parameters.get("device"), let uuid = UUID(text: raw),
            let found = try await store.devices.quietTime(applicationID: app.id, uuid: uuid)
        else {
            throw APIError.notFound("device")
        }
        return (uuid, found)
    }
}
