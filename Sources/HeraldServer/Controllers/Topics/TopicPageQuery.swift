import HeraldCore
import Hummingbird

/// The parameters of `GET /v2/topics`: `q`, `size` (1 to 50, default 20), `page` (from 1) and
/// `hasExpiry` (`true` or `false`; absent for every topic).
struct TopicPageQuery {
    var query: String?
    var size = 20
    var page = 1
    var hasExpiry: Bool?

    init(_ parameters: Parameters) throws {
        if let raw = parameters.get("size"), !raw.isEmpty {
            guard let size = Int(raw), (1...Limits.topicsPageSize).contains(size) else {
                throw APIError.badRequest("size must be an integer from 1 to \(Limits.topicsPageSize)", field: "size")
            }
            self.size = size
        }
        if let raw = parameters.get("page"), !raw.isEmpty {
            guard let page = Int(raw), page >= 1, page <= 10_000_000 else {
                throw APIError.badRequest("page must be an integer of at least 1", field: "page")
            }
            self.page = page
        }
        if let raw = parameters.get("hasExpiry"), !raw.isEmpty {
            switch raw.lowercased() {
            case "true": hasExpiry = true
            case "false": hasExpiry = false
            default: throw APIError.badRequest("hasExpiry must be true or false", field: "hasExpiry")
            }
        }
        if let q = parameters.get("q"), !q.isEmpty {
            query = try Self.text(q)
        }
    }

    /// A `q` parameter, checked as every listing checks it.
    static func text(_ q: String) throws -> String {
        guard q.count <= 255 else { throw APIError.badRequest("q is at most 255 characters", field: "q") }
        // PostgreSQL cannot compare text holding NUL; nothing stored holds one.
        guard !q.utf8.contains(0) else { throw APIError.badRequest("q must not contain NUL characters", field: "q") }
        return q
    }

    /// Pages of `size` needed for `total` topics.
    func totalPages(_ total: Int) -> Int {
        (total + size - 1) / size
    }
}
