import HeraldCore
import HeraldStore
import Hummingbird

/// `/v1/location_groups`: named sets of an application's locations, with app credentials.
struct LocationGroupsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    func addRoutes(to router: Router<Context>) {
        let group = router.group("v1/location_groups")
        group.get(use: list)
        group.post(use: create)
        group.get(":location_group_id", use: find)
        group.put(":location_group_id", use: update)
        group.delete(":location_group_id", use: delete)
    }

    struct Page: ResponseEncodable {
        var size: Int
        var locationGroups: [LocationGroupView]
        var totalLocationGroups: Int
        var totalPages: Int
        var page: Int

        enum CodingKeys: String, CodingKey {
            case size, locationGroups = "location_groups", totalLocationGroups, totalPages, page
        }
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Page {
        let app = try await auth.application(request)
        let query = try GeofencePageQuery(request.uri.queryParameters)
        let (groups, total) = try await store.locationGroups.list(
            applicationID: app.id, query: query.query, changedSince: query.changedSince, page: query.page, size: query.size)
        return Page(
            size: query.size, locationGroups: groups.map(LocationGroupView.init), totalLocationGroups: total,
            totalPages: query.totalPages(total), page: query.page)
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<LocationGroupView> {
        var request = request
        let app = try await auth.application(request)
        let changes = try await request.decodeJSON(LocationGroupInput.self).validated(requireAll: true)
        let group = try await store.locationGroups.create(applicationID: app.id, changes)
        return EditedResponse(status: .created, response: LocationGroupView(group))
    }

    @Sendable func find(_ request: Request, context: Context) async throws -> LocationGroupView {
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "location_group_id", what: "location group")
        guard let group = try await store.locationGroups.find(id: id, applicationID: app.id) else {
            throw APIError.notFound("location group")
        }
        return LocationGroupView(group)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> LocationGroupView {
        var request = request
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "location_group_id", what: "location group")
        let changes = try await request.decodeJSON(LocationGroupInput.self).validated(requireAll: false)
        guard let group = try await store.locationGroups.update(id: id, applicationID: app.id, changes) else {
            throw APIError.notFound("location group")
        }
        return LocationGroupView(group)
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "location_group_id", what: "location group")
        guard try await store.locationGroups.delete(id: id, applicationID: app.id) else {
            throw APIError.notFound("location group")
        }
        return Response(status: .noContent)
    }
}
