import HeraldCore
import HeraldStore

import struct Foundation.UUID

extension AdminScope {
    // MARK: Delivery settings

    /// The body of `PUT /admin/v1/apps/:app/delivery`, which the dashboard's delivery settings
    /// form sends too: each member given is changed; `rate_per_second: null` removes the limit,
    /// `quiet_time: null` the default quiet time.
    struct DeliverySettingsInput: Decodable, Sendable {
        var defaultTimeZone: String?
        var ratePerSecond: FieldChange<Int64>
        /// As given (checked by `QuietTime.change`); `.null` when given as null, nil when absent.
        var quietTime: JSONValue?

        enum CodingKeys: String, CodingKey {
            case defaultTimeZone = "default_time_zone"
            case ratePerSecond = "rate_per_second"
            case quietTime = "quiet_time"
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

    /// The application's delivery settings: its default time zone, send rate and quiet time.
    func deliverySettings(of app: App) async throws -> AppDeliverySettings {
        try await store.deliverySettings.find(applicationID: app.id)
    }

    /// Changes the application's delivery settings: what `PUT /admin/v1/apps/:app/delivery` and
    /// the dashboard's application page do. Errors name `default_time_zone`, `rate_per_second`
    /// and `quiet_time` (or its `start` / `end`); nothing is saved when one is refused.
    func changeDeliverySettings(of app: App, _ input: DeliverySettingsInput) async throws -> AppDeliverySettings {
        // Applied to the settings as stored, their row locked: a concurrent change of another
        // field stays.
        try await store.deliverySettings.update(applicationID: app.id) { settings in
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
                    throw APIError.badRequest(
                        "rate_per_second is a whole number from 1 to \(Limits.ratePerSecond), or null", field: "rate_per_second")
                }
                settings.ratePerSecond = Int(rate)
            }
            settings.quietTime = try QuietTime.change(input.quietTime, field: "quiet_time").applied(to: settings.quietTime)
        }
    }

    // MARK: A device's quiet time

    /// The application's device `uuid`'s zone and own quiet time, with its row id; not found
    /// when the application has no such device (the application comes from `application(_:)`,
    /// so another tenant's device is never reached).
    func quietTime(of app: App, device uuid: UUID) async throws -> (deviceID: Int64, timeZone: String?, quietTime: QuietTime?) {
        guard let found = try await store.devices.quietTime(applicationID: app.id, uuid: uuid) else {
            throw APIError.notFound("device")
        }
        return found
    }

    /// Sets or removes (`null`) the device's own quiet time, given as the API's
    /// `{"start": "HH:MM", "end": "HH:MM"}`: what `PUT /admin/v1/apps/:app/devices/:device/quiet_time`
    /// and the dashboard's device page do. Errors name `quiet_time` and its members.
    func setQuietTime(_ value: JSONValue?, of app: App, device uuid: UUID) async throws -> QuietTime? {
        let found = try await quietTime(of: app, device: uuid)
        let change = try QuietTime.change(value, field: "quiet_time")
        if case .unchanged = change {
            throw APIError.badRequest(
                "quiet_time is required: {\"start\": \"HH:MM\", \"end\": \"HH:MM\"}, or null to remove it", field: "quiet_time")
        }
        try await store.devices.setQuietTime(change, deviceID: found.deviceID)
        return change.applied(to: found.quietTime)
    }
}
