import HeraldCore
import HeraldStore
import Hummingbird

/// A geofence's page: its message, trigger and expiry changed as `PUT /v1/geofence/:id` changes
/// them (the same checks and the same update push to its devices).
extension DashboardController {
    @Sendable func geofencePage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let geofence = try await geofence(app, context)
            let form = [
                "message": Self.geofenceMessage(geofence.definition.data), "trigger_type": geofence.definition.triggerType.rawValue,
                "expiry": Self.timeInput(geofence.definition.expiryTime),
            ]
            return try await geofenceEditor(signed, app, geofence, form: form, errors: [:])
        }
    }

    @Sendable func updateGeofence(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let geofence = try await geofence(app, context)
            do {
                let message = (form["message"] ?? "").trimmingASCIIWhitespace()
                guard !message.isEmpty else { throw APIError.badRequest("the message must not be empty", field: "message") }
                var data = geofence.definition.data
                var ios = data["ios"]?.objectValue ?? [:]
                ios["alertBody"] = .string(message)
                data["ios"] = .object(ios)
                var android = data["android"]?.objectValue ?? [:]
                android["message"] = .string(message)
                data["android"] = .object(android)
                let input = GeofenceInput(
                    triggerType: form["trigger_type"] ?? "", expiryTime: .int(try Self.time(form["expiry"] ?? "", field: "expiry_time")),
                    data: .object(data))
                guard
                    try await store.geofences.update(
                        id: geofence.id, applicationID: app.id, try input.validated(), notify: locations.updates) != nil
                else { throw APIError.notFound("geofence") }
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations#geofence-\(geofence.id)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                let field = error.field ?? "any"
                let key =
                    field == "expiry_time"
                    ? "expiry"
                    : field == "trigger_type" ? "trigger_type" : field.hasPrefix("data") || field == "message" ? "message" : "any"
                return try await geofenceEditor(signed, app, geofence, form: form, errors: [key: error.message], status: error.status)
            }
        }
    }

    // MARK: Helpers

    func geofence(_ app: App, _ context: Context) async throws -> Geofence {
        guard
            let geofence = try await store.geofences.find(
                id: try GeofencePageQuery.id(context, "geofence", what: "geofence"), applicationID: app.id)
        else { throw APIError.notFound("geofence") }
        return geofence
    }

    func geofenceEditor(
        _ signed: SignedIn, _ app: App, _ geofence: Geofence, form: [String: String], errors: [String: String],
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let definition = geofence.definition
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "app": ["uuid": app.id.lowercasedString], "form": form, "errors": errors,
            "triggerExit": form["trigger_type"] == "exit", "map": mapView(geofence.locations),
            "geofence": [
                "id": geofence.id, "platform": definition.platform.rawValue,
                "places": geofence.locations.map(\.name).joined(separator: ", "),
                "tags": definition.tags.joined(separator: ", "),
                "starts": definition.startTime == 0 ? "at once" : Self.time(definition.startTime),
            ],
        ]
        return pages.page(
            "geofence", view, layout: mapLayout(try await layout(signed, title: "Geofence", app: app)).merging(errorMessage(errors)) { $1 },
            status: status)
    }
}
