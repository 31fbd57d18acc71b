import Hummingbird
import Mustache
import NIOCore

/// The dashboard's Mustache templates and static files, compiled into the binary
/// (`Dashboard/Templates`, `Dashboard/Static`), so that `herald serve` alone serves every page.
///
/// Templates use only `{{ }}`, which escapes HTML; the one `{{{content}}}` in the layout holds a
/// page this library rendered itself.
struct DashboardPages: Sendable {
    let library: MustacheLibrary
    /// Static files by name: bytes and content type.
    let files: [String: (bytes: ByteBuffer, contentType: String)]

    /// Parses the compiled-in templates; one that does not parse is a defect of the build
    /// (every dashboard test renders them), so it stops the program with the parser's message.
    init() {
        let templates: [(String, [UInt8])] = [
            ("layout", PackageResources.layout_mustache), ("signin", PackageResources.signin_mustache),
            ("apps", PackageResources.apps_mustache), ("app", PackageResources.app_mustache),
            ("credentials", PackageResources.credentials_mustache), ("platform", PackageResources.platform_mustache),
            ("secret", PackageResources.secret_mustache), ("devices", PackageResources.devices_mustache),
            ("device", PackageResources.device_mustache), ("pushes", PackageResources.pushes_mustache),
            ("push", PackageResources.push_mustache), ("error", PackageResources.error_mustache),
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
        files = [
            "dashboard.css": (ByteBuffer(bytes: PackageResources.dashboard_css), "text/css; charset=utf-8"),
            "dashboard.js": (ByteBuffer(bytes: PackageResources.dashboard_js), "text/javascript; charset=utf-8"),
        ]
    }

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
