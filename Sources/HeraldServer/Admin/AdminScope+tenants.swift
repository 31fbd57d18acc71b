import HeraldCore
import HeraldStore

import struct Foundation.UUID

/// What an admin token does to tenants and their tokens; the admin API and the dashboard both
/// call these, with a tenant that `tenant(_:)` returned.
extension AdminScope {
    /// Every tenant for a root token; a tenant token's own.
    func tenants() async throws -> [Tenant] {
        if let tenantID = token.tenantID { return [try await tenant(tenantID)] }
        return try await store.tenants.list()
    }

    /// A new tenant (root only).
    func createTenant(_ input: NameInput) async throws -> Tenant {
        try requireRoot()
        let name = try input.validated()
        guard let tenant = try await store.tenants.create(name: name) else {
            throw APIError.conflict("a tenant named '\(name)' exists already")
        }
        return tenant
    }

    /// A new admin token limited to the tenant, and its clear value (shown once).
    func createToken(in tenant: Tenant, _ input: NameInput) async throws -> (AdminToken, token: String) {
        let name = try input.validated()
        let (record, token) = try await store.adminTokens.create(tenantID: tenant.id, name: name)
        return (record, token)
    }

    /// The tenant's admin tokens (without their values).
    func tokens(of tenant: Tenant) async throws -> [AdminToken] {
        try await store.adminTokens.list(tenantID: tenant.id)
    }

    /// Deletes one of the tenant's tokens; it stops working at once.
    func deleteToken(_ tokenID: UUID, of tenant: Tenant) async throws {
        guard try await store.adminTokens.delete(id: tokenID, tenantID: tenant.id) else { throw APIError.notFound("token") }
    }
}
