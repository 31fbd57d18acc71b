import HeraldCore
import Hummingbird

/// The paging parameters of the locations, location groups and geofences listings:
/// `page` (from 1), `size` (default 25), `timestamp` (only what changed after it) and `q`.
struct GeofencePageQuery {
    var page = 1
    var size = 25
    var changedSince: Int64?
    var query: String?

    init(_ parameters: Parameters) throws {
        size = try parameters.pageSize(in: 0...Limits.geofencePageSize, default: 25)
        page = try parameters.pageNumber()
        if let raw = parameters.get("timestamp"), !raw.isEmpty {
            guard let timestamp = Int64(raw), timestamp >= 0 else {
                throw APIError.badRequest("timestamp is epoch milliseconds, a whole number of at least 0", field: "timestamp")
            }
            changedSince = timestamp
        }
        query = try parameters.searchText()
    }

    /// Pages of `size` needed for `total` items.
    func totalPages(_ total: Int) -> Int {
        size == 0 ? 0 : (total + size - 1) / size
    }

    /// The id in a route's `:name`; an id that cannot exist is simply not found.
    static func id<Context: RequestContext>(_ context: Context, _ name: String, what: String) throws -> Int64 {
        guard let raw = context.parameters.get(name), let id = Int64(raw), id > 0 else {
            throw APIError.notFound(what)
        }
        return id
    }
}
