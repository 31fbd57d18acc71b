import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// Who may call which API: devices with platform credentials, backends with app credentials,
/// operators with admin tokens.
struct Authenticator: Sendable {
    let store: Store

    /// The platform whose `platform_uuid:platform_secret` the request carries.
    func platform(_ request: Request) async throws -> Platform {
        guard let (username, password) = RequestCredentials.basic(request.headers) else {
            throw APIError.unauthorized("HTTP Basic platform_uuid:platform_secret is required", scheme: "Basic")
        }
        guard let id = UUID(text: username), let platform = try await store.platforms.authenticate(id: id, secret: password) else {
            throw APIError.unauthorized("the platform uuid or secret is wrong", scheme: "Basic")
        }
        return platform
    }

    /// The application whose `app_uuid:api_key` the request carries.
    func application(_ request: Request) async throws -> App {
        guard let (username, password) = RequestCredentials.basic(request.headers) else {
            throw APIError.unauthorized("HTTP Basic app_uuid:api_key is required", scheme: "Basic")
        }
        guard let id = UUID(text: username), let app = try await store.applications.authenticate(id: id, apiKey: password) else {
            throw APIError.unauthorized("the application uuid or api key is wrong", scheme: "Basic")
        }
        return app
    }

    /// The admin token the request carries as `Authorization: Bearer …`.
    func admin(_ request: Request) async throws -> AdminToken {
        guard let token = RequestCredentials.bearer(request.headers) else {
            throw APIError.unauthorized("an admin token is required (Authorization: Bearer …)", scheme: "Bearer")
        }
        return try await admin(token: token)
    }

    /// The admin token `token`, if it is valid: the one check for the admin API and the
    /// dashboard (whose session holds the token the operator signed in with).
    func admin(token: String) async throws -> AdminToken {
        guard let record = try await store.adminTokens.authenticate(token) else {
            throw APIError.unauthorized("the admin token is not valid", scheme: "Bearer")
        }
        return record
    }
}
