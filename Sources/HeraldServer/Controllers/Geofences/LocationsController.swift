import HeraldCore
import HeraldStore
import Hummingbird

/// `/v1/locations`: an application's geofence locations, with app credentials.
struct LocationsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let updates: GeofenceUpdatePolicy

    func addRoutes(to router: Router<Context>) {
        let group = router.group("v1/locations")
        group.get(use: list)
        group.post(use: create)
        group.get(":location_id", use: find)
        group.put(":location_id", use: update)
        group.delete(":location_id", use: delete)
    }

    struct Page: ResponseEncodable {
        var size: Int
        var locations: [LocationView]
        var totalLocations: Int
        var totalPages: Int
        var page: Int
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Page {
        let app = try await auth.application(request)
        let query = try GeofencePageQuery(request.uri.queryParameters)
        let (locations, total) = try await store.locations.list(
            applicationID: app.id, query: query.query, changedSince: query.changedSince, page: query.page, size: query.size)
        return Page(
            size: query.size, locations: locations.map { LocationView($0) }, totalLocations: total,
            totalPages: query.totalPages(total), page: query.page)
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<LocationView> {
        var request = request
        let app = try await auth.application(request)
        let changes = try await request.decodeJSON(LocationInput.self).validated(requireAll: true)
        let location = try await store.locations.create(applicationID: app.id, changes)
        return EditedResponse(status: .created, response: LocationView(location))
    }

    @Sendable func find(_ request: Request, context: Context) async throws -> LocationView {
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "location_id", what: "location")
        guard let location = try await store.locations.find(id: id, applicationID: app.id) else {
            throw APIError.notFound("location")
        }
        return LocationView(location)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> LocationView {
        var request = request
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "location_id", what: "location")
        let changes = try await request.decodeJSON(LocationInput.self).validated(requireAll: false)
        guard let location = try await store.locations.update(id: id, applicationID: app.id, changes, notify: updates) else {
            throw APIError.notFound("location")
        }
        return LocationView(location)
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "location_id", what: "location")
        switch try await store.locations.delete(id: id, applicationID: app.id) {
        case .deleted:
            return Response(status: .noContent)
        case .notFound:
            throw APIError.notFound("location")
        case .inUse(let geofenceIDs):
            let list = geofenceIDs.map(String.init).joined(separator: ", ")
            throw APIError(
                .conflict, code: "location_in_use",
                message: "location \(id) is used by geofences that have not expired (\(list)); change or delete them first")
        }
    }
}
