import HeraldCore
import HeraldStore
import Hummingbird

/// `/v1/geofence`: an application's geofences, with app credentials. Every change schedules the
/// silent push that tells the affected devices to fetch their geofences again.
struct GeofencesController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    let updates: GeofenceUpdatePolicy

    func addRoutes(to router: Router<Context>) {
        let group = router.group("v1/geofence")
        group.get(use: list)
        group.post(use: create)
        group.get(":geofence_id", use: find)
        group.put(":geofence_id", use: update)
        group.delete(":geofence_id", use: delete)
    }

    struct Page: ResponseEncodable {
        var size: Int
        var totalGeofences: Int
        var totalPages: Int
        var page: Int
        var geofences: [GeofenceView]
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Page {
        let app = try await auth.application(request)
        let query = try GeofencePageQuery(request.uri.queryParameters)
        let (geofences, total) = try await store.geofences.list(
            applicationID: app.id, changedSince: query.changedSince, page: query.page, size: query.size)
        return Page(
            size: query.size, totalGeofences: total, totalPages: query.totalPages(total), page: query.page,
            geofences: geofences.map { GeofenceView($0) })
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> EditedResponse<GeofenceView> {
        var request = request
        let app = try await auth.application(request)
        let changes = try await request.decodeJSON(GeofenceInput.self).validated()
        let geofence = try await store.geofences.create(applicationID: app.id, changes, notify: updates)
        return EditedResponse(status: .created, response: GeofenceView(geofence))
    }

    @Sendable func find(_ request: Request, context: Context) async throws -> GeofenceView {
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "geofence_id", what: "geofence")
        guard let geofence = try await store.geofences.find(id: id, applicationID: app.id) else {
            throw APIError.notFound("geofence")
        }
        let counts = try await store.analytics.counts(geofenceID: id, applicationID: app.id)
        return GeofenceView(geofence, triggered: counts[AnalyticsEventType.geofenceTriggered] ?? 0)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> GeofenceView {
        var request = request
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "geofence_id", what: "geofence")
        let changes = try await request.decodeJSON(GeofenceInput.self).validated()
        guard let geofence = try await store.geofences.update(id: id, applicationID: app.id, changes, notify: updates) else {
            throw APIError.notFound("geofence")
        }
        return GeofenceView(geofence)
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> Response {
        let app = try await auth.application(request)
        let id = try GeofencePageQuery.id(context, "geofence_id", what: "geofence")
        guard try await store.geofences.delete(id: id, applicationID: app.id, notify: updates) else {
            throw APIError.notFound("geofence")
        }
        return Response(status: .noContent)
    }
}
