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

    @Sendable func list(_ request: Request, context: Context) async throws -> GeofencePlacePage<Places.View> {
        let app = try await auth.application(request)
        let query = try GeofencePageQuery(request.uri.queryParameters)
        let (places, total) = try await places.list(applicationID: app.id, query: query)
        return GeofencePlacePage(
            listKey: Places.listKey, totalKey: Places.totalKey, size: query.size, places: places.map(Places.view), total: total,
            totalPages: query.totalPages(total), page: query.page)
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

/// A page of places as the Pivotal API lists them: `size`, the places under `listKey`, their
/// total under `totalKey`, `totalPages`, `page`.
struct GeofencePlacePage<View: Encodable & Sendable>: ResponseEncodable {
    var listKey: String
    var totalKey: String
    var size: Int
    var places: [View]
    var total: Int
    var totalPages: Int
    var page: Int

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(size, forKey: Key("size"))
        try container.encode(places, forKey: Key(listKey))
        try container.encode(total, forKey: Key(totalKey))
        try container.encode(totalPages, forKey: Key("totalPages"))
        try container.encode(page, forKey: Key("page"))
    }
}
