import HeraldCore
import HeraldStore
import Hummingbird

/// The composer's location target (Pivotal's "Target Location" and "Trigger Type"): the push
/// becomes a geofence, created as `POST /v1/geofence` creates one (the same checks and the
/// same update push), whose message the devices show when they enter or leave the location.
extension DashboardController {
    func composeGeofence(_ signed: SignedIn, _ app: App, _ form: [String: String], place: String) async throws -> Response {
        let input = try await geofenceInput(app, form, place: place)
        let changes = try input.validated()
        if form["action"] == "validate" {
            _ = try changes.definition(now: clock.now.epochMilliseconds)
            return try await composer(
                signed, app, form: form, errors: [:], previews: nil,
                notice:
                    "Valid. Sending creates a geofence: devices show the message when they \(input.triggerType ?? "enter") the location.")
        }
        let geofence = try await store.geofences.create(applicationID: app.id, changes, notify: locations.updates)
        return Self.redirect("/dashboard/apps/\(app.id.lowercasedString)/locations#geofence-\(geofence.id)")
    }

    /// The `POST /v1/geofence` body the composer describes: the location's (or group's)
    /// locations, the trigger, the topics as tags, iOS and/or Android, the message as the
    /// notification each SDK shows, the schedule as the start and the expiry (required).
    func geofenceInput(_ app: App, _ form: [String: String], place: String) async throws -> GeofenceInput {
        let message = (form["message"] ?? "").trimmingASCIIWhitespace()
        guard !message.isEmpty else { throw APIError.badRequest("a location push needs a message", field: "message") }
        let parts = place.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let id = Int64(parts[1]) else {
            throw APIError.badRequest("choose a location or a group", field: "target_location")
        }
        let ids: [Int64]
        switch parts[0] {
        case "location": ids = [try await locations.place(id: id, applicationID: app.id).id]
        case "group":
            ids = try await locationGroups.place(id: id, applicationID: app.id).locations.map(\.id)
            guard !ids.isEmpty else { throw APIError.badRequest("this location group has no locations", field: "target_location") }
        default: throw APIError.badRequest("choose a location or a group", field: "target_location")
        }
        let platforms = Self.composerPlatforms.filter { form["platform_\($0)"] == "on" }
        guard platforms.allSatisfy({ $0 == "ios" || $0 == "android" }) else {
            throw APIError.badRequest("a location push reaches iOS and Android devices only", field: "target.platforms")
        }
        if let users = form["custom_user_ids"], !users.trimmingASCIIWhitespace().isEmpty {
            throw APIError.badRequest("a location push targets platforms and topics, not custom user ids", field: "target.custom_user_ids")
        }
        if let audience = form["audience"], !audience.trimmingASCIIWhitespace().isEmpty {
            throw APIError.badRequest("a location push targets platforms and topics, not an audience expression", field: "target.audience")
        }
        guard let expiry = form["expiry"], !expiry.isEmpty else {
            throw APIError.badRequest("a location push needs an expiry time: the geofence is watched until then", field: "expiryTime")
        }
        var start: Int64 = 0
        switch form["schedule"] ?? "now" {
        case "at": start = try Self.time(form["schedule_at"] ?? "", field: "scheduleAt")
        case "in":
            guard let seconds = Int64((form["schedule_in"] ?? "").trimmingASCIIWhitespace()), seconds >= 0, seconds < 1_000_000_000 else {
                throw APIError.badRequest("send in: a number of seconds", field: "scheduleIn")
            }
            start = clock.now.epochMilliseconds + seconds * 1000
        default: break
        }
        let topics = Self.commaList(form["topics"])
        var ios: [String: JSONValue] = ["alertBody": .string(message)]
        if let category = form["ios_category"]?.trimmingASCIIWhitespace(), !category.isEmpty { ios["category"] = .string(category) }
        return GeofenceInput(
            tags: topics, locations: ids.map { .int($0) }, triggerType: form["trigger_type"] ?? "enter", startTime: .int(start),
            expiryTime: .int(try Self.time(expiry, field: "expiryTime")), platform: platforms.count == 1 ? platforms[0] : "all",
            data: .object(["ios": .object(ios), "android": .object(["message": .string(message)])]))
    }
}
