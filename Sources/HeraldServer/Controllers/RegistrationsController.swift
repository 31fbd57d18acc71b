import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// `GET /v2/registrations`: an application's devices, searched and paged, with app credentials.
struct RegistrationsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    func addRoutes(to router: Router<Context>) {
        router.get("v2/registrations", use: list)
    }

    struct Page: ResponseEncodable {
        var registrations: [RegistrationResponse]
        var totalRegistrations: Int
        var totalPages: Int
        var page: Int
        var size: Int
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Page {
        let app = try await auth.application(request)
        let query = try DeviceQuery(request.uri.queryParameters)
        let (devices, total) = try await store.devices.search(
            applicationID: app.id, filter: query.filter, page: query.page, size: query.size)
        return Page(
            registrations: devices.map(RegistrationResponse.init(device:)),
            totalRegistrations: total,
            totalPages: query.size == 0 ? 0 : (total + query.size - 1) / query.size,
            page: query.page,
            size: query.size)
    }
}

/// The paging and filter parameters shared by the device listings.
struct DeviceQuery {
    var filter = DeviceFilter()
    var page = 1
    var size = 20

    init(_ parameters: Parameters) throws {
        size = try parameters.pageSize(in: 0...Limits.registrationsPageSize, default: 20)
        page = try parameters.pageNumber()
        if let raw = parameters.get("platform"), !raw.isEmpty, raw.lowercased() != "all" {
            filter.platformType = try PlatformType.parse(raw, field: "platform")
        }
        if let raw = parameters.get("platformUuid"), !raw.isEmpty {
            guard let id = UUID(text: raw) else {
                throw APIError.badRequest("platformUuid must be a UUID", field: "platformUuid")
            }
            filter.platformID = id
        }
        if let topic = parameters.get("topic"), !topic.isEmpty {
            filter.topic = topic
        }
        filter.query = try parameters.searchText()
    }
}
