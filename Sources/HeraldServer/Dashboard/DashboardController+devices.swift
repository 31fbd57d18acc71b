import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.URLComponents
import struct Foundation.URLQueryItem
import struct Foundation.UUID

/// Devices: search and page them (the `/v2/registrations` filters), one device with its badge
/// count (reset as `PUT /admin/v1/apps/:app/devices/:device/badge` does) and its quiet time
/// (`DashboardController+delivery`); its test push is the composer's (`compose?device=`).
extension DashboardController {
    @Sendable func devicesPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let parameters = request.uri.queryParameters
            var shown: [String: String] = [:]
            for name in ["q", "platform", "platformUuid", "topic", "size", "page"] { shown[name] = parameters.get(name) ?? "" }
            let platforms = try await signed.scope.platforms(of: app)
            var view: [String: Any] = [
                "app": ["uuid": app.id.lowercasedString], "maxSize": Limits.registrationsPageSize,
                "platformTypes": PlatformType.allCases.map {
                    ["value": $0.rawValue, "selected": shown["platform"] == $0.rawValue] as [String: Any]
                },
                "platforms": platforms.map {
                    [
                        "uuid": $0.id.lowercasedString, "name": "\($0.name) (\($0.type.rawValue))",
                        "selected": shown["platformUuid"] == $0.id.lowercasedString,
                    ] as [String: Any]
                },
            ]
            let status: HTTPResponse.Status
            do {
                let query = try DeviceQuery(parameters)
                let (devices, total) = try await signed.scope.devices(of: app, query)
                shown["page"] = String(query.page)
                shown["size"] = String(query.size)
                view["total"] = total
                view["devices"] = devices.map { Self.deviceView($0) }
                if query.page > 1 { view["previous"] = Self.devicesLink(app, shown, page: query.page - 1) }
                if query.page * query.size < total { view["next"] = Self.devicesLink(app, shown, page: query.page + 1) }
                status = .ok
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                view["total"] = 0
                view["devices"] = [[String: Any]]()
                view["errors"] = ["any": error.message]
                status = error.status
            }
            view["query"] = shown
            return pages.page("devices", view, layout: try await layout(signed, title: "Devices", app: app), status: status)
        }
    }

    @Sendable func devicePage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let (app, device) = try await self.device(signed, context)
            return try await devicePage(signed, app, device, form: [:], errors: [:])
        }
    }

    /// Resets the device's badge count to 0, through the admin API's operation, and shows the page again.
    @Sendable func resetBadge(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let (app, device) = try await self.device(signed, context)
            try await signed.scope.setBadge(0, of: app, device: device.uuid)
            return try await devicePage(signed, app, device, form: [:], errors: [:], notice: "The badge count is reset to 0.")
        }
    }

    // MARK: Pages

    /// One device: its facts, its badge count (autobadge) with the reset form, the link to a test push.
    func devicePage(
        _ signed: SignedIn, _ app: App, _ device: Device, form: [String: String], errors: [String: String],
        notice: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let badge = try await signed.scope.badge(of: app, device: device.uuid).badge
        let quiet = try await signed.scope.quietTime(of: app, device: device.uuid)
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "device": Self.deviceView(device), "form": form, "errors": errors,
            "quiet": Self.deviceQuietView(
                zone: quiet.timeZone, own: quiet.quietTime, settings: try await signed.scope.deliverySettings(of: app), form: form),
            "badge": String(badge), "badgeSet": badge != 0, "isIOS": device.platformType == .ios,
        ]
        var layout = try await layout(signed, title: "Device", app: app).merging(errorMessage(errors)) { $1 }
        if let notice { layout["notice"] = notice }
        return pages.page("device", view, layout: layout, status: status)
    }

    // MARK: Helpers

    /// The application and the device named in the path, if the token may see them.
    func device(_ signed: SignedIn, _ context: Context) async throws -> (App, Device) {
        let app = try await signed.scope.application(try Self.id(context, "app", "application"))
        let id = try Self.id(context, "device", "device")
        var query = try DeviceQuery(Parameters())
        query.filter.query = id.lowercasedString
        query.size = 2
        guard let device = try await signed.scope.devices(of: app, query).devices.first(where: { $0.uuid == id }) else {
            throw APIError.notFound("device")
        }
        return (app, device)
    }

    static func deviceView(_ device: Device) -> [String: Any] {
        [
            "uuid": device.uuid.lowercasedString, "app_uuid": device.applicationID.lowercasedString,
            "platform_uuid": device.platformID.lowercasedString, "platform_type": device.platformType.rawValue, "os": device.os,
            "os_version": device.osVersion ?? "", "alias": device.deviceAlias ?? "", "model": device.deviceModel ?? "",
            "manufacturer": device.deviceManufacturer ?? "", "token": device.registrationToken,
            "custom_user_id": device.customUserID ?? "", "tags": device.tags.joined(separator: ", "), "active": device.active,
        ]
    }

    /// The devices page with the same filters on another page.
    static func devicesLink(_ app: App, _ shown: [String: String], page: Int) -> String {
        var components = URLComponents()
        components.path = "/dashboard/apps/\(app.id.lowercasedString)/devices"
        var items = ["q", "platform", "platformUuid", "topic", "size"].compactMap { name in
            shown[name].flatMap { $0.isEmpty ? nil : URLQueryItem(name: name, value: $0) }
        }
        items.append(URLQueryItem(name: "page", value: String(page)))
        components.queryItems = items
        return components.string ?? components.path
    }
}
