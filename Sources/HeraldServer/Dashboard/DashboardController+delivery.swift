import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.Data

/// Quiet time and the other delivery settings: an application's defaults (time zone, send rate,
/// quiet time) on its configuration page and a device's own quiet time on its page, changed
/// through the admin API's operations (`AdminScope.changeDeliverySettings`, `setQuietTime`) with
/// the admin API's own request, so their checks and field names are the API's.
extension DashboardController {
    /// The application's delivery settings, as `PUT /admin/v1/apps/:app/delivery` with every member.
    @Sendable func updateDeliverySettings(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            do {
                let body = Self.json([
                    "default_time_zone": .string((form["default_time_zone"] ?? "").trimmingASCIIWhitespace()),
                    "rate_per_second": Self.number(form["rate_per_second"]),
                    "quiet_time": Self.quietTime(form),
                ])
                let input = try Request.decodeJSONDocument(AdminScope.DeliverySettingsInput.self, from: body)
                _ = try await signed.scope.changeDeliverySettings(of: app, input)
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)#delivery")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await application(
                    signed, app, form: ["name": app.name, "description": app.description].merging(form) { $1 }, errors: Self.errors(error),
                    status: error.status)
            }
        }
    }

    /// The device's own quiet time, as `PUT /admin/v1/apps/:app/devices/:device/quiet_time`;
    /// both times empty removes it (the application's default applies).
    @Sendable func updateDeviceQuietTime(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let (app, device) = try await self.device(signed, context)
            do {
                let body = Self.json(["quiet_time": Self.quietTime(form)])
                let input = try Request.decodeJSONDocument(DeviceQuietTimeController<Context>.QuietTimeInput.self, from: body)
                let set = try await signed.scope.setQuietTime(input.quietTime, of: app, device: device.uuid)
                let notice =
                    set.map { "The device's quiet time is now \($0.startText) to \($0.endText)." }
                    ?? "The device has no quiet time of its own now."
                return try await devicePage(signed, app, device, form: [:], errors: [:], notice: notice)
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await devicePage(signed, app, device, form: form, errors: Self.errors(error), status: error.status)
            }
        }
    }

    // MARK: Views

    /// The delivery settings as the application page shows and edits them: what was typed
    /// (`form`), else what is stored.
    static func deliveryView(_ settings: AppDeliverySettings, form: [String: String]) -> [String: Any] {
        [
            "default_time_zone": form["default_time_zone"] ?? settings.defaultTimeZone,
            "rate_per_second": form["rate_per_second"] ?? settings.ratePerSecond.map(String.init) ?? "",
            "quiet_time_start": form["quiet_time_start"] ?? settings.quietTime?.startText ?? "",
            "quiet_time_end": form["quiet_time_end"] ?? settings.quietTime?.endText ?? "",
            "quiet": settings.quietTime.map { "\($0.startText) to \($0.endText), in each device's zone" }
                ?? "none: a device without a quiet time of its own is never quiet",
            "rate": settings.ratePerSecond.map { "\($0) devices a second" } ?? "no limit",
        ]
    }

    /// A device's zone and quiet time as its page shows them, with the application's defaults
    /// that apply when it has none of its own.
    static func deviceQuietView(
        zone: String?, own: QuietTime?, settings: AppDeliverySettings, form: [String: String]
    ) -> [String: Any] {
        let applied: String =
            if let own { "\(own.startText) to \(own.endText) (its own)" } else if let fallback = settings.quietTime {
                "\(fallback.startText) to \(fallback.endText) (the application's default)"
            } else { "none: it is never quiet" }
        return [
            "zone": zone.map { "\($0)" } ?? "none of its own: the application's default, \(settings.defaultTimeZone)",
            "applied": applied, "hasOwn": own != nil,
            "quiet_time_start": form["quiet_time_start"] ?? own?.startText ?? "",
            "quiet_time_end": form["quiet_time_end"] ?? own?.endText ?? "",
        ]
    }

    // MARK: Helpers

    /// A quiet time's two fields as the API's `quiet_time`: both empty is `null` (none); anything
    /// else goes to `QuietTime.change` as typed.
    static func quietTime(_ form: [String: String]) -> JSONValue {
        let start = (form["quiet_time_start"] ?? "").trimmingASCIIWhitespace()
        let end = (form["quiet_time_end"] ?? "").trimmingASCIIWhitespace()
        if start.isEmpty, end.isEmpty { return .null }
        return .object(["start": .string(start), "end": .string(end)])
    }

    /// A number field: empty is `null`, a whole number is sent as one, anything else as the text
    /// typed (which the API's reading refuses naming the field).
    static func number(_ text: String?) -> JSONValue {
        let typed = (text ?? "").trimmingASCIIWhitespace()
        if typed.isEmpty { return .null }
        return Int64(typed).map { .int($0) } ?? .string(typed)
    }

    /// A JSON object's bytes, as an API request's body.
    static func json(_ members: [String: JSONValue]) -> Data {
        Data(JSONValue.object(members).jsonText.utf8)
    }
}
