import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// `GET`/`PUT /admin/v1/apps/:app/delivery`: an app's default time zone (for `scheduleLocal`
/// and devices registered without `time_zone`), default send rate and default quiet time (for
/// devices registered without `quiet_time`), with a bearer admin token.
struct DeliverySettingsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    func addRoutes(to router: Router<Context>) {
        router.get("admin/v1/apps/:app/delivery", use: get)
        router.put("admin/v1/apps/:app/delivery", use: update)
    }

    struct SettingsView: ResponseEncodable {
        var defaultTimeZone: String
        var ratePerSecond: Int?
        var quietTime: QuietTime?

        enum CodingKeys: String, CodingKey {
            case defaultTimeZone = "default_time_zone"
            case ratePerSecond = "rate_per_second"
            case quietTime = "quiet_time"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(defaultTimeZone, forKey: .defaultTimeZone)
            // null (not absent) when there is no limit or no quiet time, so that the setting is visible.
            try container.encode(ratePerSecond, forKey: .ratePerSecond)
            try container.encode(quietTime?.json ?? .null, forKey: .quietTime)
        }

        init(_ settings: AppDeliverySettings) {
            defaultTimeZone = settings.defaultTimeZone
            ratePerSecond = settings.ratePerSecond
            quietTime = settings.quietTime
        }
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> SettingsView {
        let app = try await application(request, context)
        return SettingsView(try await store.deliverySettings.find(applicationID: app.id))
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> SettingsView {
        var request = request
        let (scope, app) = try await AdminScope.scoped(request, context, auth: auth, store: store)
        let input = try await request.decodeJSON(AdminScope.DeliverySettingsInput.self)
        return SettingsView(try await scope.changeDeliverySettings(of: app, input))
    }

    private func application(_ request: Request, _ context: Context) async throws -> App {
        try await AdminScope.application(request, context, auth: auth, store: store)
    }
}
