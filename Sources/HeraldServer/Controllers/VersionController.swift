import Hummingbird

/// `GET /v1/version`, unauthenticated.
///
/// `version` is the Pivotal API level Herald implements (the PCF iOS SDK turns analytics on
/// only for 1.3.2 and later); `herald` is this build's own version.
struct VersionController<Context: RequestContext>: Sendable {
    static var apiVersion: String { "1.6.0" }

    let heraldVersion: String

    struct Version: ResponseEncodable {
        var version: String
        var herald: String
    }

    func addRoutes(to router: Router<Context>) {
        router.get("v1/version") { _, _ in
            Version(version: Self.apiVersion, herald: heraldVersion)
        }
    }
}
