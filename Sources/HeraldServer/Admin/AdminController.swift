import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// `/admin/v1`: tenants, admin tokens, applications, platforms and devices, with a bearer admin token.
struct AdminController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator

    func addRoutes(to router: Router<Context>) {
        let admin = router.group("admin/v1")
        // Tenants and their tokens
        admin.post("tenants", use: createTenant)
        admin.get("tenants", use: listTenants)
        admin.get("tenants/:tenant", use: getTenant)
        admin.put("tenants/:tenant", use: renameTenant)
        admin.delete("tenants/:tenant", use: deleteTenant)
        admin.post("tenants/:tenant/tokens", use: createToken)
        admin.get("tenants/:tenant/tokens", use: listTokens)
        admin.delete("tenants/:tenant/tokens/:token_id", use: deleteToken)
        // Applications
        admin.post("apps", use: createApplication)
        admin.get("apps", use: listApplications)
        admin.get("apps/:app", use: getApplication)
        admin.put("apps/:app", use: updateApplication)
        admin.delete("apps/:app", use: deleteApplication)
        admin.post("apps/:app/api_key", use: regenerateAPIKey)
        admin.get("apps/:app/devices", use: listDevices)
        // Platforms
        admin.post("apps/:app/platforms", use: createPlatform)
        admin.get("apps/:app/platforms", use: listPlatforms)
        admin.get("platforms/:platform", use: getPlatform)
        admin.put("platforms/:platform", use: updatePlatform)
        admin.delete("platforms/:platform", use: deletePlatform)
        admin.post("platforms/:platform/secret", use: regenerateSecret)
    }

    // MARK: Tenants

    @Sendable func createTenant(_ request: Request, context: Context) async throws -> EditedResponse<TenantView> {
        var request = request
        let scope = try await scope(request)
        try scope.requireRoot()
        let tenant = try await scope.createTenant(try await request.decodeJSON(NameInput.self))
        return EditedResponse(status: .created, response: TenantView(tenant))
    }

    @Sendable func listTenants(_ request: Request, context: Context) async throws -> ListView<TenantView> {
        let scope = try await scope(request)
        return ListView(items: try await scope.tenants().map(TenantView.init))
    }

    @Sendable func getTenant(_ request: Request, context: Context) async throws -> TenantView {
        let scope = try await scope(request)
        return TenantView(try await scope.tenant(try id(context, "tenant")))
    }

    @Sendable func renameTenant(_ request: Request, context: Context) async throws -> TenantView {
        var request = request
        let scope = try await scope(request)
        try scope.requireRoot()
        var tenant = try await scope.tenant(try id(context, "tenant"))
        let name = try await request.decodeJSON(NameInput.self).validated()
        guard try await store.tenants.rename(id: tenant.id, to: name) else {
            throw APIError.conflict("a tenant named '\(name)' exists already")
        }
        tenant.name = name
        return TenantView(tenant)
    }

    @Sendable func deleteTenant(_ request: Request, context: Context) async throws -> Response {
        let scope = try await scope(request)
        try scope.requireRoot()
        let tenant = try await scope.tenant(try id(context, "tenant"))
        switch try await store.tenants.delete(id: tenant.id) {
        case .deleted: return Response(status: .noContent)
        case .notFound: throw APIError.notFound("tenant")
        case .inUse: throw APIError.conflict("the tenant still has applications; delete them first")
        }
    }

    @Sendable func createToken(_ request: Request, context: Context) async throws -> EditedResponse<AdminTokenView> {
        var request = request
        let scope = try await scope(request)
        let tenant = try await scope.tenant(try id(context, "tenant"))
        let (record, token) = try await scope.createToken(in: tenant, try await request.decodeJSON(NameInput.self))
        return EditedResponse(status: .created, response: AdminTokenView(record, token: token))
    }

    @Sendable func listTokens(_ request: Request, context: Context) async throws -> ListView<AdminTokenView> {
        let scope = try await scope(request)
        return ListView(items: try await scope.tokens(of: try await scope.tenant(try id(context, "tenant"))).map { AdminTokenView($0) })
    }

    @Sendable func deleteToken(_ request: Request, context: Context) async throws -> Response {
        let scope = try await scope(request)
        let tenant = try await scope.tenant(try id(context, "tenant"))
        try await scope.deleteToken(try id(context, "token_id"), of: tenant)
        return Response(status: .noContent)
    }

    // MARK: Applications

    @Sendable func createApplication(_ request: Request, context: Context) async throws -> EditedResponse<ApplicationView> {
        var request = request
        let scope = try await scope(request)
        let (app, apiKey) = try await scope.createApplication(try await request.decodeJSON(ApplicationInput.self))
        return EditedResponse(status: .created, response: ApplicationView(app, apiKey: apiKey))
    }

    @Sendable func listApplications(_ request: Request, context: Context) async throws -> ListView<ApplicationView> {
        let scope = try await scope(request)
        return ListView(items: try await scope.applications().map { ApplicationView($0) })
    }

    @Sendable func getApplication(_ request: Request, context: Context) async throws -> ApplicationView {
        let scope = try await scope(request)
        return ApplicationView(try await scope.application(try id(context, "app")))
    }

    @Sendable func updateApplication(_ request: Request, context: Context) async throws -> ApplicationView {
        var request = request
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        return ApplicationView(try await scope.updateApplication(app, try await request.decodeJSON(ApplicationInput.self)))
    }

    @Sendable func deleteApplication(_ request: Request, context: Context) async throws -> Response {
        let scope = try await scope(request)
        try await scope.deleteApplication(try await scope.application(try id(context, "app")))
        return Response(status: .noContent)
    }

    @Sendable func regenerateAPIKey(_ request: Request, context: Context) async throws -> ApplicationView {
        let scope = try await scope(request)
        let (app, apiKey) = try await scope.regenerateAPIKey(try await scope.application(try id(context, "app")))
        return ApplicationView(app, apiKey: apiKey)
    }

    @Sendable func listDevices(_ request: Request, context: Context) async throws -> DevicePageView {
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        let query = try DeviceQuery(request.uri.queryParameters)
        let (devices, total) = try await scope.devices(of: app, query)
        return DevicePageView(
            devices: devices.map(RegistrationResponse.init(device:)), total: total, page: query.page, size: query.size)
    }

    // MARK: Platforms

    @Sendable func createPlatform(_ request: Request, context: Context) async throws -> EditedResponse<PlatformView> {
        var request = request
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        let (platform, secret) = try await scope.createPlatform(in: app, try await request.decodeJSON(PlatformInput.self))
        return EditedResponse(status: .created, response: PlatformView(platform, secret: secret))
    }

    @Sendable func listPlatforms(_ request: Request, context: Context) async throws -> ListView<PlatformView> {
        let scope = try await scope(request)
        return ListView(items: try await scope.platforms(of: try await scope.application(try id(context, "app"))).map { PlatformView($0) })
    }

    @Sendable func getPlatform(_ request: Request, context: Context) async throws -> PlatformView {
        let scope = try await scope(request)
        return PlatformView(try await scope.platform(try id(context, "platform")))
    }

    @Sendable func updatePlatform(_ request: Request, context: Context) async throws -> PlatformView {
        var request = request
        let scope = try await scope(request)
        let platform = try await scope.platform(try id(context, "platform"))
        return PlatformView(try await scope.updatePlatform(platform, try await request.decodeJSON(PlatformInput.self)))
    }

    @Sendable func deletePlatform(_ request: Request, context: Context) async throws -> Response {
        let scope = try await scope(request)
        try await scope.deletePlatform(try await scope.platform(try id(context, "platform")))
        return Response(status: .noContent)
    }

    @Sendable func regenerateSecret(_ request: Request, context: Context) async throws -> PlatformView {
        let scope = try await scope(request)
        let (platform, secret) = try await scope.regenerateSecret(try await scope.platform(try id(context, "platform")))
        return PlatformView(platform, secret: secret)
    }

    // MARK: Helpers

    private func scope(_ request: Request) async throws -> AdminScope {
        AdminScope(token: try await auth.admin(request), store: store)
    }

    private func id(_ context: Context, _ name: String) throws -> UUID {
        guard let raw = context.parameters.get(name), let id = UUID(text: raw) else {
            throw APIError.notFound(name == "app" ? "application" : name)
        }
        return id
    }
}
