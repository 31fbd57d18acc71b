import HeraldCore
import HeraldStore

import struct Foundation.UUID

/// What an admin token may reach: everything (root) or one tenant's applications.
struct AdminScope: Sendable {
    let token: AdminToken
    let store: Store

    var isRoot: Bool { token.tenantID == nil }

    func requireRoot() throws {
        guard isRoot else { throw APIError.forbidden("this needs an admin token that is not limited to one tenant") }
    }

    /// The tenant, if the token may see it; not found otherwise (never "forbidden", which would tell it exists).
    func tenant(_ id: UUID) async throws -> Tenant {
        guard isRoot || token.tenantID == id, let tenant = try await store.tenants.find(id: id) else {
            throw APIError.notFound("tenant")
        }
        return tenant
    }

    func application(_ id: UUID) async throws -> App {
        guard let app = try await store.applications.find(id: id, tenantID: token.tenantID) else {
            throw APIError.notFound("application")
        }
        return app
    }

    func platform(_ id: UUID) async throws -> Platform {
        guard let platform = try await store.platforms.find(id: id),
            try await store.applications.find(id: platform.applicationID, tenantID: token.tenantID) != nil
        else { throw APIError.notFound("platform") }
        return platform
    }
}
