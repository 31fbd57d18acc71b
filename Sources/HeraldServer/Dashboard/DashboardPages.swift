import Hummingbird
import Mustache
import NIOCore

import class Foundation.FileManager

/// The dashboard's Mustache templates and static files, compiled into the binary
/// (`Dashboard/Templates`, `Dashboard/Static`), so that `herald serve` alone serves every page.
///
/// Templates use only `{{ }}`, which escapes HTML; the one `{{{content}}}` in the layout holds a
/// page this library rendered itself.
struct DashboardPages: Sendable {
    let library: MustacheLibrary
    /// Static files by name: bytes and content type.
    let files: [String: (bytes: ByteBuffer, contentType: String)]

    /// Third-party browser libraries, read once from Debian's packages (or a copy of them) under
    /// `vendorDirectory`: `libjs-chart.js`'s `chart.js/chart.min.js` is served as
    /// `/dashboard/vendor/chart.js`, `libjs-leaflet`'s as `vendor/leaflet.js` and `vendor/leaflet.css`.
    /// A missing file is left out, and the pages that would use it show their data as tables
    /// only. Nothing is fetched from another host.
    static let vendorFiles: [(name: String, path: String, contentType: String)] = [
        ("chart.js", "chart.js/chart.min.js", "text/javascript; charset=utf-8"),
        ("leaflet.js", "leaflet/leaflet.min.js", "text/javascript; charset=utf-8"),
        ("leaflet.css", "leaflet/leaflet.css", "text/css; charset=utf-8"),
    ]

    /// Parses the compiled-in templates, once; one that does not parse is a defect of the build
    /// (every dashboard test renders them), so it stops the program with the parser's message.
    init(vendorDirectory: String? = "/usr/share/javascript") {
        let templates: [(String, [UInt8])] = [
            ("layout", PackageResources.layout_mustache), ("signin", PackageResources.signin_mustache),
            ("apps", PackageResources.apps_mustache), ("app", PackageResources.app_mustache),
            ("credentials", PackageResources.credentials_mustache), ("platform", PackageResources.platform_mustache),
            ("secret", PackageResources.secret_mustache), ("devices", PackageResources.devices_mustache),
            ("device", PackageResources.device_mustache), ("pushes", PackageResources.pushes_mustache),
            ("push", PackageResources.push_mustache), ("error", PackageResources.error_mustache), ("logs", PackageResources.logs_mustache),
            ("analytics", PackageResources.analytics_mustache), ("tenants", PackageResources.tenants_mustache),
            ("tenant", PackageResources.tenant_mustache), ("compose", PackageResources.compose_mustache),
            ("analytics_chart", PackageResources.analytics_chart_mustache), ("schedules", PackageResources.schedules_mustache),
            ("topics", PackageResources.topics_mustache), ("locations", PackageResources.locations_mustache),
            ("location", PackageResources.location_mustache), ("location_group", PackageResources.location_group_mustache),
            ("map", PackageResources.map_mustache), ("location_fields", PackageResources.location_fields_mustache),
            ("group_fields", PackageResources.group_fields_mustache), ("geofence", PackageResources.geofence_mustache),
            ("quiet_time_fields", PackageResources.quiet_time_fields_mustache),
        ]
        var library = MustacheLibrary()
        for (name, bytes) in templates {
            do {
                try library.register(String(decoding: bytes, as: UTF8.self), named: name)
            } catch {
                fatalError("the dashboard template \(name).mustache does not parse: \(error)")
            }
        }
        self.library = library
        var files = [
            "dashboard.css": (ByteBuffer(bytes: PackageResources.dashboard_css), "text/css; charset=utf-8"),
            "dashboard.js": (ByteBuffer(bytes: PackageResources.dashboard_js), "text/javascript; charset=utf-8"),
            "favicon.svg": (ByteBuffer(bytes: PackageResources.favicon_svg), "image/svg+xml"),
            // Natural Earth's 1:110m coastline (public domain), the map's world without a tile server
            // (made by scripts/dashboard/world.py from Debian's r-cran-rnaturalearthdata).
            "world.geojson": (ByteBuffer(bytes: PackageResources.world_geojson), "application/geo+json"),
        ]
        if let vendorDirectory {
            for file in Self.vendorFiles {
                if let bytes = FileManager.default.contents(atPath: vendorDirectory + "/" + file.path) {
                    files["vendor/" + file.name] = (ByteBuffer(bytes: bytes), file.contentType)
                }
            }
        }
        self.files = files
    }

    /// What an operator should know at start about the browser libraries under `vendorDirectory`:
    /// one line for each that is missing, saying what the pages lack without it.
    static func warnings(vendorDirectory: String?) -> [String] {
        func served(_ names: String...) -> Bool {
            guard let vendorDirectory else { return false }
            return names.allSatisfy { name in
                vendorFiles.first { $0.name == name }.map { FileManager.default.isReadableFile(atPath: vendorDirectory + "/" + $0.path) }
                    ?? false
            }
        }
        var warnings: [String] = []
        if !served("leaflet.js", "leaflet.css") {
            warnings.append(
                "dashboard: no map library (Debian's libjs-leaflet: leaflet/leaflet.min.js and leaflet.css under \(vendorDirectory ?? "no directory")); "
                    + "the Locations pages take typed latitudes and longitudes only. Install libjs-leaflet or set --dashboard-assets.")
        }
        if !served("chart.js") {
            warnings.append(
                "dashboard: no chart library (Debian's libjs-chart.js: chart.js/chart.min.js under \(vendorDirectory ?? "no directory")); "
                    + "analytics are shown as tables only. Install libjs-chart.js or set --dashboard-assets.")
        }
        return warnings
    }

    /// Whether the map library (Debian's `libjs-leaflet`) is served: without it the locations
    /// pages say so and take a typed latitude and longitude.
    var hasMapLibrary: Bool { files["vendor/leaflet.js"] != nil && files["vendor/leaflet.css"] != nil }

    /// Whether the chart library (Debian's `libjs-chart.js`) is served: without it analytics are tables only.
    var hasChartLibrary: Bool { files["vendor/chart.js"] != nil }

    /// `template` rendered with `view`, inside the layout with `layout`'s values.
    func page(_ template: String, _ view: [String: Any], layout: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        var layout = layout
        layout["content"] = library.render(view, withTemplate: template) ?? ""
        let html = library.render(layout, withTemplate: "layout") ?? ""
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
