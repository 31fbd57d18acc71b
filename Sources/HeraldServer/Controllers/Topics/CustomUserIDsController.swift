import HeraldCore
import HeraldStore
import Hummingbird

/// `GET /v2/custom_user_ids[?q=…]`: the custom user ids an application's devices registered
/// with, with app credentials.
struct CustomUserIDsController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    func addRoutes(to router: Router<Context>) {
        router.get("v2/custom_user_ids", use: list)
    }

    struct List: ResponseEncodable {
        var customUserIDs: [String]

        enum CodingKeys: String, CodingKey {
            case customUserIDs = "custom_user_ids"
        }
    }

    /// Every distinct id, sorted; with `q`, those containing it (case-sensitive, as the ids are).
    @Sendable func list(_ request: Request, context: Context) async throws -> List {
        let app = try await auth.application(request)
        let query = try request.uri.queryParameters.searchText()
        return List(customUserIDs: try await store.devices.customUserIDs(applicationID: app.id, containing: query))
    }
}
