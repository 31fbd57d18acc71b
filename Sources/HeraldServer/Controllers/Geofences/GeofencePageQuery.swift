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
        if let raw = parameters.get("size"), !raw.isEmpty {
            guard let size = Int(raw), (0...Limits.geofencePageSize).contains(size) else {
                throw APIError.badRequest("size must be an integer from 0 to \(Limits.geofencePageSize)", field: "size")
            }
            self.size = size
        }
        if let raw = parameters.get("page"), !raw.isEmpty {
            guard let page = Int(raw), page >= 1, page <= 10_000_000 else {
                throw APIError.badRequest("page must be an integer of at least 1", field: "page")
            }
            self.page = page
        }
        if let raw = parameters.get("timestamp"), !raw.isEmpty {
            guard let timestamp = Int64(raw), timestamp >= 0 else {
                throw APIError.badRequest("timestamp is epoch milliseconds, a whole number of at least 0", field: "timestamp")
            }
            changedSince = timestamp
        }
        if let q = parameters.get("q"), !q.isEmpty {
            guard q.count <= 255 else { throw APIError.badRequest("q is at most 255 characters", field: "q") }
            // PostgreSQL cannot compare text holding NUL; nothing stored holds one.
            guard !q.utf8.contains(0) else { throw APIError.badRequest("q must not contain NUL characters", field: "q") }
            query = q
        }
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
