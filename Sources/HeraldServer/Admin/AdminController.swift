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
        admin.delete("tenants/:tenant/tokens/:token", use: deleteToken)
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
        let name = try await request.decodeJSON(NameInput.self).validated()
        guard let tenant = try await store.tenants.create(name: name) else {
            throw APIError.conflict("a tenant named '\(name)' exists already")
        }
        return EditedResponse(status: .created, response: TenantView(tenant))
    }

    @Sendable func listTenants(_ request: Request, context: Context) async throws -> ListView<TenantView> {
        let scope = try await scope(request)
        if let tenantID = scope.token.tenantID {
            return ListView(items: [TenantView(try await scope.tenant(tenantID))])
        }
        return ListView(items: try await store.tenants.list().map(TenantView.init))
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
        let name = try await request.decodeJSON(NameInput.self).validated()
        let (record, token) = try await store.adminTokens.create(tenantID: tenant.id, name: name)
        return EditedResponse(status: .created, response: AdminTokenView(record, token: token))
    }

    @Sendable func listTokens(_ request: Request, context: Context) async throws -> ListView<AdminTokenView> {
        let scope = try await scope(request)
        let tenant = try await scope.tenant(try id(context, "tenant"))
        return ListView(items: try await store.adminTokens.list(tenantID: tenant.id).map { AdminTokenView($0) })
    }

    @Sendable func deleteToken(_ request: Request, context: Context) async throws -> Response {
        let scope = try await scope(request)
        let tenant = try await scope.tenant(try id(context, "tenant"))
        guard try await store.adminTokens.delete(id: try id(context, "token"), tenantID: tenant.id) else {
            throw APIError.notFound("token")
        }
        return Response(status: .noContent)
    }

    // MARK: Applications

    @Sendable func createApplication(_ request: Request, context: Context) async throws -> EditedResponse<ApplicationView> {
        var request = request
        let scope = try await scope(request)
        let input = try await request.decodeJSON(ApplicationInput.self)
        let name = try AdminValidation.name(input.name ?? "", field: "name")
        let description = try AdminValidation.description(input.description) ?? ""
        let (givenID, givenKey) = try AdminValidation.givenIdentity(uuid: input.uuid, secret: input.apiKey, secretField: "api_key")
        let tenantID: UUID
        if let requested = try AdminValidation.uuid(input.tenantID, field: "tenant_id") {
            tenantID = try await scope.tenant(requested).id
        } else if let own = scope.token.tenantID {
            tenantID = own
        } else {
            guard let fallback = try await store.tenants.find(name: Bootstrap.defaultTenantName) else {
                throw APIError.badRequest("tenant_id is required", field: "tenant_id", code: "missing_field")
            }
            tenantID = fallback.id
        }
        let (app, apiKey) = try await Self.creatingIdentity(givenID) {
            try await store.applications.create(
                tenantID: tenantID, name: name, description: description, verifiesCustomUserID: input.verifyCustomUserID ?? true,
                id: givenID, apiKey: givenKey)
        }
        return EditedResponse(status: .created, response: ApplicationView(app, apiKey: apiKey))
    }

    @Sendable func listApplications(_ request: Request, context: Context) async throws -> ListView<ApplicationView> {
        let scope = try await scope(request)
        return ListView(items: try await store.applications.list(tenantID: scope.token.tenantID).map { ApplicationView($0) })
    }

    @Sendable func getApplication(_ request: Request, context: Context) async throws -> ApplicationView {
        let scope = try await scope(request)
        return ApplicationView(try await scope.application(try id(context, "app")))
    }

    @Sendable func updateApplication(_ request: Request, context: Context) async throws -> ApplicationView {
        var request = request
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        let input = try await request.decodeJSON(ApplicationInput.self)
        if input.tenantID != nil {
            throw APIError.badRequest("an application cannot move to another tenant", field: "tenant_id")
        }
        try AdminValidation.refuseGivenIdentity(uuid: input.uuid, secret: input.apiKey, secretField: "api_key")
        let name = try input.name.map { try AdminValidation.name($0, field: "name") }
        let description = try AdminValidation.description(input.description)
        guard
            let updated = try await store.applications.update(
                id: app.id, name: name, description: description, includesReceiptID: input.includeReceiptID,
                verifiesCustomUserID: input.verifyCustomUserID)
        else {
            throw APIError.notFound("application")
        }
        return ApplicationView(updated)
    }

    @Sendable func deleteApplication(_ request: Request, context: Context) async throws -> Response {
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        switch try await store.applications.delete(id: app.id) {
        case .deleted: return Response(status: .noContent)
        case .notFound: throw APIError.notFound("application")
        case .inUse: throw APIError.conflict("the application still has platforms; delete them first")
        }
    }

    @Sendable func regenerateAPIKey(_ request: Request, context: Context) async throws -> ApplicationView {
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        guard let apiKey = try await store.applications.regenerateAPIKey(id: app.id) else {
            throw APIError.notFound("application")
        }
        return ApplicationView(app, apiKey: apiKey)
    }

    @Sendable func listDevices(_ request: Request, context: Context) async throws -> DevicePageView {
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        let query = try DeviceQuery(request.uri.queryParameters)
        let (devices, total) = try await store.devices.search(
            applicationID: app.id, filter: query.filter, page: query.page, size: query.size)
        return DevicePageView(
            devices: devices.map(RegistrationResponse.init(device:)), total: total, page: query.page, size: query.size)
    }

    // MARK: Platforms

    @Sendable func createPlatform(_ request: Request, context: Context) async throws -> EditedResponse<PlatformView> {
        var request = request
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        let input = try await request.decodeJSON(PlatformInput.self)
        guard let rawType = input.type else {
            throw APIError.badRequest("type is required (ios, android, web or windows)", field: "type", code: "missing_field")
        }
        let type = try PlatformType.parse(rawType, field: "type")
        let name = try AdminValidation.name(input.name ?? type.rawValue, field: "name")
        let (givenID, givenSecret) = try AdminValidation.givenIdentity(uuid: input.uuid, secret: input.secret, secretField: "secret")
        let credentials = try input.credentials?.validate(for: type)
        let fcmNotification = try input.checkedFCMNotification(for: type) ?? false
        let (platform, secret) = try await Self.creatingIdentity(givenID) {
            try await store.platforms.create(
                applicationID: app.id, name: name, type: type, credentials: credentials, id: givenID, secret: givenSecret,
                fcmNotification: fcmNotification)
        }
        return EditedResponse(status: .created, response: PlatformView(platform, secret: secret))
    }

    @Sendable func listPlatforms(_ request: Request, context: Context) async throws -> ListView<PlatformView> {
        let scope = try await scope(request)
        let app = try await scope.application(try id(context, "app"))
        return ListView(items: try await store.platforms.list(applicationID: app.id).map { PlatformView($0) })
    }

    @Sendable func getPlatform(_ request: Request, context: Context) async throws -> PlatformView {
        let scope = try await scope(request)
        return PlatformView(try await scope.platform(try id(context, "platform")))
    }

    @Sendable func updatePlatform(_ request: Request, context: Context) async throws -> PlatformView {
        var request = request
        let scope = try await scope(request)
        let platform = try await scope.platform(try id(context, "platform"))
        let input = try await request.decodeJSON(PlatformInput.self)
        if let rawType = input.type, (try? PlatformType.parse(rawType, field: "type")) != platform.type {
            throw APIError.badRequest(
                "a platform's type is fixed once set (this one is '\(platform.type.rawValue)'); create another platform instead",
                field: "type", code: "immutable_field")
        }
        try AdminValidation.refuseGivenIdentity(uuid: input.uuid, secret: input.secret, secretField: "secret")
        let name = try input.name.map { try AdminValidation.name($0, field: "name") }
        let credentials = try input.credentials?.validate(for: platform.type)
        let fcmNotification = try input.checkedFCMNotification(for: platform.type)
        guard
            let updated = try await store.platforms.update(
                id: platform.id, name: name, credentials: credentials, fcmNotification: fcmNotification)
        else {
            throw APIError.notFound("platform")
        }
        return PlatformView(updated)
    }

    @Sendable func deletePlatform(_ request: Request, context: Context) async throws -> Response {
        let scope = try await scope(request)
        let platform = try await scope.platform(try id(context, "platform"))
        switch try await store.platforms.delete(id: platform.id) {
        case .deleted: return Response(status: .noContent)
        case .notFound: throw APIError.notFound("platform")
        case .inUse: throw APIError.conflict("the platform still has devices; it cannot be deleted")
        }
    }

    @Sendable func regenerateSecret(_ request: Request, context: Context) async throws -> PlatformView {
        let scope = try await scope(request)
        let platform = try await scope.platform(try id(context, "platform"))
        guard let secret = try await store.platforms.regenerateSecret(id: platform.id) else {
            throw APIError.notFound("platform")
        }
        return PlatformView(platform, secret: secret)
    }

    // MARK: Helpers

    /// Runs a creation; a uuid the operator gave that is in use anywhere answers 409 naming `uuid`.
    private static func creatingIdentity<Created>(_ givenID: UUID?, _ create: () async throws -> Created) async throws -> Created {
        do {
            return try await create()
        } catch let error as StoreError where error.reason == .uniqueViolation {
            guard let givenID else { throw error }
            throw APIError(
                .conflict, code: "conflict",
                message: "the uuid \(givenID.lowercasedString) is already used by an application or platform", field: "uuid")
        }
    }

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
