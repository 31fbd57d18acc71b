import HeraldCore
import HeraldStore
import Hummingbird

/// Tenants and their admin tokens, for a root token (a tenant's token is told it cannot).
extension DashboardController {
    /// Tenants are the root token's: a tenant's token is told so plainly (403), not "something went wrong".
    static func requireRoot(_ signed: SignedIn) throws(APIError) {
        guard !signed.scope.isRoot else { return }
        throw APIError(
            .forbidden, code: "root_only",
            message:
                "Only the root token can manage tenants and their tokens. You are signed in with the tenant token “\(signed.scope.token.name)”, which manages its own tenant’s applications."
        )
    }

    @Sendable func tenantsPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            try Self.requireRoot(signed)
            return try await tenants(signed, form: [:], errors: [:])
        }
    }

    @Sendable func createTenant(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            try Self.requireRoot(signed)
            do {
                let tenant = try await signed.scope.createTenant(NameInput(name: form["name"] ?? ""))
                return Self.redirect("/dashboard/tenants/\(tenant.id.lowercasedString)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await tenants(signed, form: form, errors: Self.errors(error), status: error.status)
            }
        }
    }

    @Sendable func tenantPage(_ request: Request, context: Context) async throws -> Response {
        try await page(request) { signed in
            try Self.requireRoot(signed)
            let tenant = try await signed.scope.tenant(try Self.id(context, "tenant", "tenant"))
            return try await tenantView(signed, tenant, form: [:], errors: [:])
        }
    }

    @Sendable func createToken(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, form in
            try Self.requireRoot(signed)
            let tenant = try await signed.scope.tenant(try Self.id(context, "tenant", "tenant"))
            do {
                let (record, token) = try await signed.scope.createToken(in: tenant, NameInput(name: form["name"] ?? ""))
                return try await secretPage(
                    signed, title: "Admin token created", app: nil,
                    explanation:
                        "The token “\(record.name)” signs in to the dashboard and calls the admin API for the tenant “\(tenant.name)” only.",
                    identifiers: [("Tenant", tenant.name), ("Token id", record.id.lowercasedString)], secretName: "Admin token",
                    secret: token,
                    next: "/dashboard/tenants/\(tenant.id.lowercasedString)")
            } catch {
                guard let error = Self.formRefusal(error) else { throw error }
                return try await tenantView(signed, tenant, form: form, errors: Self.errors(error), status: error.status)
            }
        }
    }

    @Sendable func deleteToken(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            try Self.requireRoot(signed)
            let tenant = try await signed.scope.tenant(try Self.id(context, "tenant", "tenant"))
            try await signed.scope.deleteToken(try Self.id(context, "token", "token"), of: tenant)
            return Self.redirect("/dashboard/tenants/\(tenant.id.lowercasedString)")
        }
    }

    // MARK: Pages

    func tenants(_ signed: SignedIn, form: [String: String], errors: [String: String], status: HTTPResponse.Status = .ok) async throws
        -> Response
    {
        let tenants = try await signed.scope.tenants()
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "form": form, "errors": errors,
            "tenants": tenants.map { ["id": $0.id.lowercasedString, "name": $0.name, "created": Self.time($0.createdAt)] },
        ]
        return pages.page(
            "tenants", view, layout: try await layout(signed, title: "Tenants").merging(errorMessage(errors)) { $1 }, status: status)
    }

    func tenantView(
        _ signed: SignedIn, _ tenant: Tenant, form: [String: String], errors: [String: String], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let tokens = try await signed.scope.tokens(of: tenant)
        let view: [String: Any] = [
            "csrf": signed.session.csrf, "form": form, "errors": errors,
            "tenant": ["id": tenant.id.lowercasedString, "name": tenant.name],
            "tokens": tokens.map {
                ["id": $0.id.lowercasedString, "name": $0.name, "created": Self.time($0.createdAt), "tenant": tenant.id.lowercasedString]
            },
        ]
        return pages.page(
            "tenant", view, layout: try await layout(signed, title: "Tenant \(tenant.name)").merging(errorMessage(errors)) { $1 },
            status: status)
    }
}
