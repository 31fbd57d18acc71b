import HeraldCore
import HeraldStore
import Hummingbird
import struct Foundation.UUID

/// `GET`/`PUT /admin/v1/apps/:app/devices/:device/badge`: the iOS badge count Herald keeps for a
/// device (autobadge, `custom.ios.badge: "+1"`), read or reset with a bearer admin token.
struct DeviceBadgeController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    func addRoutes(to router: Router<Context>) {
        router.get("admin/v1/apps/:app/devices/:device/badge", use: get)
        router.put("admin/v1/apps/:app/devices/:device/badge", use: update)
    }

    struct BadgeView: ResponseEncodable {
        var deviceUUID: String
        var badge: Int64

        enum CodingKeys: String, CodingKey {
            case deviceUUID = "device_uuid", badge
        }
    }

    /// The body of a `PUT`: `{"badge": 0}`.
    struct BadgeInput: Decodable {
        var badge: JSONValue?
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> BadgeView {
        let (uuid, found) = try await device(request, context)
        return BadgeView(deviceUUID: uuid.lowercasedString, badge: found.badge)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> BadgeView {
        var request = request
        let (uuid, found) = try await device(request, context)
        let input = try await request.decodeJSON(BadgeInput.self)
        guard let badge = try RegistrationInput.badgeCount(input.badge, field: "badge") else {
            throw APIError.badRequest("badge is required: the number the app's icon shows, such as 0", field: "badge")
        }
        try await store.devices.setBadge(badge, deviceID: found.deviceID)
        return BadgeView(deviceUUID: uuid.lowercasedString, badge: badge)
    }

    /// The app's device named in the path; not found for another tenant's app or another app's device.
    private func device(_ request: Request, _ context: Context) async throws -> (UUID, (deviceID: Int64, badge: Int64)) {
        let app = try await AdminScope.application(request, context, auth: auth, store: store)
        guard let raw = context.parameters.get("device"), let uuid = UUID(text: raw),
            let found = try await store.devices.badge(applicationID: app.id, uuid: uuid)
        else {
            throw APIError.notFound("device")
        }
        return (uuid, found)
    }
}
