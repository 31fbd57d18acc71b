/// A tile server for the dashboard's map (`herald serve --dashboard-map-tiles URL`), for
/// operators who have one they may use; without it the map draws locations on a plain
/// background and nothing leaves the host.
package struct DashboardMapTiles: Sendable, Equatable {
    /// A Leaflet tile URL template: `https://tiles.example.com/{z}/{x}/{y}.png`.
    package var url: String
    /// The credit the tile server asks for, shown in the map's corner.
    package var attribution: String
    /// The URL's scheme, host and port: what the pages' Content-Security-Policy lets images come from.
    package var origin: String

    /// Nil unless `url` is an http(s) URL holding `{z}`, `{x}` and `{y}` and nothing that
    /// could break out of a Content-Security-Policy source (spaces, quotes, semicolons, commas).
    package init?(url: String, attribution: String = "") {
        guard url.hasPrefix("https://") || url.hasPrefix("http://"), ["{z}", "{x}", "{y}"].allSatisfy(url.contains),
            !url.contains(where: { $0.isWhitespace || "\"';,<>\\".contains($0) })
        else { return nil }
        let afterScheme = url.drop { $0 != "/" }.dropFirst(2)
        let authority = afterScheme.prefix { $0 != "/" }
        guard !authority.isEmpty, !authority.contains("{"), !authority.contains("@") else { return nil }
        self.url = url
        self.attribution = attribution
        origin = String(url.prefix { $0 != ":" }) + "://" + authority
    }
}
