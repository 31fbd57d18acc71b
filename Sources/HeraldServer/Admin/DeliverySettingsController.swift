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
            case defaultTimeZone = "default_time_zone", ratePerSecond = "rate_per_second", quietTime = "quiet_time"
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

    /// The body of a `PUT`: each field given is changed; `rate_per_second: null` removes the
    /// limit, `quiet_time: null` the default quiet time.
    struct SettingsInput: Decodable {
        var defaultTimeZone: String?
        var ratePerSecond: FieldChange<Int64>
        /// As given (checked by `QuietTime.change`); `.null` when given as null, nil when absent.
        var quietTime: JSONValue?

        enum CodingKeys: String, CodingKey {
            case defaultTimeZone = "default_time_zone", ratePerSecond = "rate_per_second", quietTime = "quiet_time"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            defaultTimeZone = try container.decodeIfPresent(String.self, forKey: .defaultTimeZone)
            if !container.contains(.ratePerSecond) {
                ratePerSecond = .unchanged
            } else if let value = try container.decodeIfPresent(Int64.self, forKey: .ratePerSecond) {
                ratePerSecond = .set(value)
            } else {
                ratePerSecond = .clear
            }
            quietTime = try container.decodeJSONIfPresent(forKey: .quietTime)
        }
    }

    @Sendable func get(_ request: Request, context: Context) async throws -> SettingsView {
        let app = try await application(request, context)
        return SettingsView(try await store.deliverySettings.find(applicationID: app.id))
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> SettingsView {
        var request = request
        let app = try await application(request, context)
        let input = try await request.decodeJSON(SettingsInput.self)
        // Applied to the settings as stored, their row locked: a concurrent change of another
        // field stays.
        let settings = try await store.deliverySettings.update(applicationID: app.id) { settings in
            if let zone = input.defaultTimeZone {
                guard PushSchedule.isTimeZone(zone) else {
                    throw APIError.badRequest("'\(zone)' is not an IANA time zone such as Europe/Paris", field: "default_time_zone")
                }
                settings.defaultTimeZone = zone
            }
            switch input.ratePerSecond {
            case .unchanged: break
            case .clear: settings.ratePerSecond = nil
            case .set(let rate):
                guard (1...Limits.ratePerSecond).contains(rate) else {
                    throw APIError.badRequest("rate_per_second is a whole number from 1 to \(Limits.ratePerSecond), or null", field: "rate_per_second")
                }
                settings.ratePerSecond = Int(rate)
            }
            settings.quietTime = try QuietTime.change(input.quietTime, field: "quiet_time").applied(to: settings.quietTime)
        }
        return SettingsView(settings)
    }

    private func application(_ request: Request, _ context: Context) async throws -> App {
        try await AdminScope.application(request, context, auth: auth, store: store)
    }
}
