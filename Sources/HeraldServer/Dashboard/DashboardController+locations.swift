import HeraldCore
import HeraldStore
import Hummingbird

import class Foundation.JSONEncoder

/// Locations, location groups and geofences, with a map (Leaflet, from Debian's `libjs-leaflet`)
/// that shows each location's radius and places a new one where it is clicked. Every change
/// goes through the same operations as `/v1/locations` and `/v1/location_groups`
/// (`Locations`, `LocationGroups`) and `/v1/geofence` (the store's geofence operations with the
/// same update push).
extension DashboardController {
    var locationGroups: LocationGroups { LocationGroups(store: store) }

    /// At most this many locations, groups and geofences are listed (and drawn) on the page.
    static var placesShown: Int { Limits.geofencePageSize }

    @Sendable func locationsPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            return try await places(signed, app, form: ["rad": "100"], errors: [:])
        }
    }

    @Sendable func createLocation(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            do {
                let location = try await locations.create(applicationID: app.id, Self.locationInput(form))
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations#location-\(location.id)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await places(signed, app, form: form, errors: Self.errors(error), status: error.status)
            }
        }
    }

    @Sendable func locationPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let location = try await locations.place(id: try locationID(context), applicationID: app.id)
            let view = LocationView(location)
            return try await locationEditor(
                signed, app, location, form: ["name": view.name, "lat": view.lat, "long": view.long, "rad": Self.metres(location.radius)],
                errors: [:])
        }
    }

    @Sendable func updateLocation(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let id = try locationID(context)
            let location = try await locations.place(id: id, applicationID: app.id)
            do {
                _ = try await locations.update(id: id, applicationID: app.id, Self.locationInput(form))
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations#location-\(id)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await locationEditor(signed, app, location, form: form, errors: Self.errors(error), status: error.status)
            }
        }
    }

    /// Deleting a location a live geofence uses is refused (the API's 409), said on the page.
    @Sendable func deleteLocation(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            do {
                try await locations.delete(id: try locationID(context), applicationID: app.id)
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await places(signed, app, form: ["rad": "100"], errors: ["any": error.message], status: error.status)
            }
        }
    }

    @Sendable func createLocationGroup(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            do {
                let group = try await locationGroups.create(applicationID: app.id, Self.groupInput(form))
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations#group-\(group.id)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await places(
                    signed, app, form: ["rad": "100"], groupForm: form, errors: Self.groupErrors(error), status: error.status)
            }
        }
    }

    @Sendable func locationGroupPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let group = try await locationGroups.place(id: try groupID(context), applicationID: app.id)
            var form = ["name": group.name, "description": group.description]
            for location in group.locations { form["location_\(location.id)"] = "on" }
            return try await groupEditor(signed, app, group, form: form, errors: [:])
        }
    }

    @Sendable func updateLocationGroup(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let id = try groupID(context)
            let group = try await locationGroups.place(id: id, applicationID: app.id)
            do {
                _ = try await locationGroups.update(id: id, applicationID: app.id, Self.groupInput(form))
                return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations#group-\(id)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await groupEditor(signed, app, group, form: form, errors: Self.groupErrors(error), status: error.status)
            }
        }
    }

    @Sendable func deleteLocationGroup(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            try await locationGroups.delete(id: try groupID(context), applicationID: app.id)
            return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations")
        }
    }

    /// Deletes a geofence as `DELETE /v1/geofence/:id` does (with the update push to its devices).
    @Sendable func deleteGeofence(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            let app = try await signed.scope.application(try Self.id(context, "app", "application"))
            let id = try GeofencePageQuery.id(context, "geofence", what: "geofence")
            guard try await store.geofences.delete(id: id, applicationID: app.id, notify: locations.updates) else {
                throw APIError.notFound("geofence")
            }
            return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations")
        }
    }

    // MARK: Pages

    /// The locations page: the map, the locations, the groups and the geofences, and the forms
    /// to add a location and a group (`form`, `groupForm`: what was typed; `errors` by field).
    func places(
        _ signed: SignedIn, _ app: App, form: [String: String], groupForm: [String: String] = [:], errors: [String: String],
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let uuid = app.id.lowercasedString
        let all = try await allLocations(app)
        let groups = try await locationGroups.list(applicationID: app.id, query: try Self.allPlaces()).places
        let geofences = try await store.geofences.list(applicationID: app.id, page: 1, size: Self.placesShown).geofences
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "app": ["uuid": uuid], "form": form, "errors": errors, "map": mapView(all),
            "locations": all.map { location -> [String: Any] in
                let shown = LocationView(location)
                return [
                    "id": location.id, "name": location.name, "lat": shown.lat, "long": shown.long, "rad": Self.metres(location.radius),
                    "app": uuid,
                ]
            },
            "groupLocations": all.map {
                ["id": $0.id, "name": $0.name, "checked": groupForm["location_\($0.id)"] == "on"] as [String: Any]
            },
            "groupForm": groupForm,
            "groups": groups.map { group -> [String: Any] in
                [
                    "id": group.id, "name": group.name, "description": group.description, "app": uuid,
                    "members": group.locations.map(\.name).joined(separator: ", "),
                ]
            },
            "geofences": geofences.map { geofence -> [String: Any] in
                let definition = geofence.definition
                return [
                    "id": geofence.id, "app": uuid, "trigger": definition.triggerType.rawValue, "platform": definition.platform.rawValue,
                    "places": geofence.locations.map(\.name).joined(separator: ", "), "tags": definition.tags.joined(separator: ", "),
                    "starts": definition.startTime == 0 ? "at once" : Self.time(definition.startTime),
                    "expires": Self.time(definition.expiryTime),
                    "message": Self.geofenceMessage(definition.data),
                ]
            },
        ]
        return pages.page(
            "locations", view,
            layout: mapLayout(try await layout(signed, title: "Locations and geofences", app: app)).merging(errorMessage(errors)) { $1 },
            status: status)
    }

    func locationEditor(
        _ signed: SignedIn, _ app: App, _ location: Location, form: [String: String], errors: [String: String],
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "app": ["uuid": app.id.lowercasedString], "form": form, "errors": errors,
            "location": ["id": location.id], "map": mapView([location]),
        ]
        return pages.page(
            "location", view, layout: mapLayout(try await layout(signed, title: "Location", app: app)).merging(errorMessage(errors)) { $1 },
            status: status)
    }

    func groupEditor(
        _ signed: SignedIn, _ app: App, _ group: LocationGroup, form: [String: String], errors: [String: String],
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let all = try await allLocations(app)
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "app": ["uuid": app.id.lowercasedString], "groupForm": form, "errors": errors,
            "group": ["id": group.id],
            "groupLocations": all.map { ["id": $0.id, "name": $0.name, "checked": form["location_\($0.id)"] == "on"] as [String: Any] },
        ]
        return pages.page(
            "location_group", view,
            layout: try await layout(signed, title: "Location group", app: app).merging(errorMessage(errors)) { $1 },
            status: status)
    }

    // MARK: Helpers

    func allLocations(_ app: App) async throws -> [Location] {
        try await locations.list(applicationID: app.id, query: try Self.allPlaces()).places
    }

    /// The first `placesShown` of a kind, by id.
    static func allPlaces() throws -> GeofencePageQuery {
        var query = try GeofencePageQuery(Parameters())
        query.size = placesShown
        return query
    }

    func locationID(_ context: Context) throws -> Int64 { try GeofencePageQuery.id(context, "location", what: "location") }
    func groupID(_ context: Context) throws -> Int64 { try GeofencePageQuery.id(context, "group", what: "location group") }

    /// The map's data: each location's name, centre and radius, and the tile layer if one is set.
    func mapView(_ locations: [Location]) -> [String: Any] {
        let places = locations.map { MapPlace(id: $0.id, name: $0.name, lat: $0.latitude, long: $0.longitude, rad: $0.radius) }
        let json = (try? JSONEncoder().encode(places)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        var map: [String: Any] = ["places": json, "library": pages.hasMapLibrary]
        if let tiles = mapTiles {
            map["tiles"] = tiles.url
            map["attribution"] = tiles.attribution
        }
        return map
    }

    /// `layout` with Leaflet's script and style sheet, when they are served.
    func mapLayout(_ layout: [String: Any]) -> [String: Any] {
        var layout = layout
        if pages.hasMapLibrary {
            layout["scripts"] = ["/dashboard/vendor/leaflet.js"]
            layout["styles"] = ["/dashboard/vendor/leaflet.css"]
        }
        return layout
    }

    /// A location from the form's text fields, as the API would receive it.
    static func locationInput(_ form: [String: String]) -> LocationInput {
        func number(_ name: String) -> JSONValue? { form[name].map { .string($0.trimmingASCIIWhitespace()) } }
        return LocationInput(name: form["name"] ?? "", lat: number("lat"), long: number("long"), rad: number("rad"))
    }

    /// A group from the form: name, description and one `location_ID` checkbox per location.
    static func groupInput(_ form: [String: String]) -> LocationGroupInput {
        let ids = form.compactMap { key, value -> Int64? in
            guard key.hasPrefix("location_"), value == "on" else { return nil }
            return Int64(key.dropFirst("location_".count))
        }
        return LocationGroupInput(
            name: form["name"] ?? "", description: form["description"] ?? "", locationIDs: ids.sorted().map { .int($0) })
    }

    /// A group form's refusal by field (`location_ids[2]` is the locations list).
    static func groupErrors(_ error: APIError) -> [String: String] {
        let field = error.field ?? "any"
        let key = field.hasPrefix("location_ids") ? "group_locations" : field == "name" || field == "description" ? "group_" + field : "any"
        return [key: error.message]
    }

    /// A radius as typed: whole metres without a fraction.
    static func metres(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// What a geofence shows when it triggers (its iOS alert, or its Android message).
    static func geofenceMessage(_ data: [String: JSONValue]) -> String {
        if case .string(let text)? = data["ios"]?.objectValue?["alertBody"] { return text }
        if case .string(let text)? = data["android"]?.objectValue?["message"] { return text }
        return ""
    }
}

/// A location as the map script reads it.
private struct MapPlace: Encodable {
    var id: Int64
    var name: String
    var lat: Double
    var long: Double
    var rad: Double
}
