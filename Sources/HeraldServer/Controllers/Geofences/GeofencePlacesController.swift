import HeraldCore
import HeraldStore
import Hummingbird

/// `/v1/locations` and `/v1/location_groups`, with app credentials: list, create, read, change
/// and delete one kind of geofence place through its `GeofencePlaces` operations.
struct GeofencePlacesController<Places: GeofencePlaces, Context: RequestContext>: Sendable {
    let places: Places
    let auth: Authenticator
    /// `v1/locations`, `v1/location_groups`.
    let path: String
    /// The id's route parameter: `location_id`, `location_group_id`.
    let parameter: String

    func addRoutes(to router: Router<Context>) {
        let group = router.group(RouterPath(path))
        group.get(use: list)
        group.post(use: create)
        group.get(RouterPath(":" + parameter), use: find)
        group.put(RouterPath(":" + parameter), use: update)
        group.delete(RouterPath(":" + parameter), use: delete)
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> GeofencePlacePage<Places> {
        let app = try await auth.application(request)
        let query = try GeofencePageQuery(request.uri.queryParameters)
        let (places, total) = try await places.list(applicationID: app.id, query: query)
        return GeofencePlacePage(
            size: query.size, places: places.map(Places.view), total: total, totalPages: query.totalPages(total), page: query.page)
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<Places.View> {
        var request = request
        let app = try await auth.application(request)
        let place = try await places.create(applicationID: app.id, try await request.decodeJSON(Places.Input.self))
        return EditedResponse(status: .created, response: Places.view(place))
    }

    @Sendable func find(_ request: Request, context: Context) async throws -> Places.View {
        let app = try await auth.application(request)
        return Places.view(try await places.place(id: try id(context), applicationID: app.id))
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> Places.View {
        var request = request
        let app = try await auth.application(request)
        let id = try id(context)
        let input = try await request.decodeJSON(Places.Input.self)
        return Places.view(try await places.update(id: id, applicationID: app.id, input))
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        try await places.delete(id: try id(context), applicationID: app.id)
        return Response(status: .noContent)
    }

    private func id(_ context: Context) throws -> Int64 {
        try GeofencePageQuery.id(context, parameter, what: Places.noun)
    }
}

/// A page of places as the Pivotal API lists them: `size`, the places under their kind's
/// `listKey`, their total under its `totalKey`, `totalPages`, `page`.
struct GeofencePlacePage<Places: GeofencePlaces>: ResponseEncodable {
    var size: Int
    var places: [Places.View]
    var total: Int
    var totalPages: Int
    var page: Int

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyCodingKey.self)
        try container.encode(size, forKey: AnyCodingKey("size"))
        try container.encode(places, forKey: AnyCodingKey(Places.listKey))
        try container.encode(total, forKey: AnyCodingKey(Places.totalKey))
        try container.encode(totalPages, forKey: AnyCodingKey("totalPages"))
        try container.encode(page, forKey: AnyCodingKey("page"))
    }
}
