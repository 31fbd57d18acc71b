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
        size = try parameters.pageSize(in: 1...Limits.topicsPageSize, default: 20)
        page = try parameters.pageNumber()
        if let raw = parameters.get("hasExpiry"), !raw.isEmpty {
            switch raw.lowercased() {
            case "true": hasExpiry = true
            case "false": hasExpiry = false
            default: throw APIError.badRequest("hasExpiry must be true or false", field: "hasExpiry")
            }
        }
        query = try parameters.searchText()
    }

    /// Pages of `size` needed for `total` topics.
    func totalPages(_ total: Int) -> Int {
        (total + size - 1) / size
    }
}
