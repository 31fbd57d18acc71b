import Hummingbird

/// The query parameters every listing reads alike. An absent or empty parameter is the default.
extension Parameters {
    /// `size`: an integer in `range`, else 400 naming `size`.
    func pageSize(in range: ClosedRange<Int>, default fallback: Int) throws -> Int {
        guard let raw = get("size"), !raw.isEmpty else { return fallback }
        guard let size = Int(raw), range.contains(size) else {
            throw APIError.badRequest("size must be an integer from \(range.lowerBound) to \(range.upperBound)", field: "size")
        }
        return size
    }

    /// `page`: from 1 (the default).
    func pageNumber() throws -> Int {
        guard let raw = get("page"), !raw.isEmpty else { return 1 }
        guard let page = Int(raw), page >= 1, page <= 10_000_000 else {
            throw APIError.badRequest("page must be an integer of at least 1", field: "page")
        }
        return page
    }

    /// `q`: at most 255 Unicode code points, the unit of JSON Schema's `maxLength` that the
    /// document states it with (a NUL was refused by `StorableQueryMiddleware`); nil when absent
    /// or empty.
    func searchText() throws -> String? {
        guard let q = get("q"), !q.isEmpty else { return nil }
        guard q.unicodeScalars.count <= 255 else { throw APIError.badRequest("q is at most 255 code points", field: "q") }
        return q
    }
}
