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
            case deviceUUID = "device_uuid"
            case timeZone = "time_zone"
            case quietTime = "quiet_time"
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
        let (scope, app, uuid) = try await device(request, context)
        let found = try await scope.quietTime(of: app, device: uuid)
        return QuietTimeView(deviceUUID: uuid.lowercasedString, timeZone: found.timeZone, quietTime: found.quietTime)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> QuietTimeView {
        var request = request
        let (scope, app, uuid) = try await device(request, context)
        // An unknown device is 404 whatever the body says.
        let zone = try await scope.quietTime(of: app, device: uuid).timeZone
        let input = try await request.decodeJSON(QuietTimeInput.self)
        let quietTime = try await scope.setQuietTime(input.quietTime, of: app, device: uuid)
        return QuietTimeView(deviceUUID: uuid.lowercasedString, timeZone: zone, quietTime: quietTime)
    }

    /// The token's scope, the application and the device uuid named in the path; not found for
    /// another tenant's application (the scope's operations refuse another application's device).
    private func device(_ request: Request, _ context: Context) async throws -> (AdminScope, App, UUID) {
        let (scope, app) = try await AdminScope.scoped(request, context, auth: auth, store: store)
        guard let raw = context.parameters.get("device"), let uuid = UUID(text: raw) else {
            throw APIError.notFound("device")
        }
        return (scope, app, uuid)
    }
}
