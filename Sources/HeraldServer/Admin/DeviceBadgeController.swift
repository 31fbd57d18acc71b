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
            case deviceUUID = "device_uuid"
            case badge
        }
    }

    /// The body of a `PUT`: `{"badge": 0}`.
    struct BadgeInput: Decodable {
        var badge: JSONValue?
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> BadgeView {
        let (scope, app, uuid) = try await device(request, context)
        return BadgeView(deviceUUID: uuid.lowercasedString, badge: try await scope.badge(of: app, device: uuid).badge)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> BadgeView {
        var request = request
        let (scope, app, uuid) = try await device(request, context)
        let input = try await request.decodeJSON(BadgeInput.self)
        guard let badge = try RegistrationInput.badgeCount(input.badge, field: "badge") else {
            throw APIError.badRequest("badge is required: the number the app's icon shows, such as 0", field: "badge")
        }
        try await scope.setBadge(badge, of: app, device: uuid)
        return BadgeView(deviceUUID: uuid.lowercasedString, badge: badge)
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
