import HeraldCore
import HeraldStore

import struct Foundation.UUID

/// What an admin token does to applications: the admin API (`AdminController`) and the
/// dashboard both call these. The token's reach is checked by the lookups (`application(_:)`,
/// `platform(_:)`), once per request; the operations take what a lookup returned.
extension AdminScope {
    // MARK: Applications

    /// The applications the token may see.
    func applications() async throws -> [App] {
        try await store.applications.list(tenantID: token.tenantID)
    }

    /// A new application and its api key (shown once).
    func createApplication(_ input: ApplicationInput) async throws -> (App, apiKey: String) {
        let name = try AdminValidation.name(input.name ?? "", field: "name")
        let description = try AdminValidation.description(input.description) ?? ""
        let (givenID, givenKey) = try AdminValidation.givenIdentity(uuid: input.uuid, secret: input.apiKey, secretField: "api_key")
        let tenantID: UUID
        if let requested = try AdminValidation.uuid(input.tenantID, field: "tenant_id") {
            tenantID = try await tenant(requested).id
        } else if let own = token.tenantID {
            tenantID = own
        } else {
            guard let fallback = try await store.tenants.find(name: Bootstrap.defaultTenantName) else {
                throw APIError.badRequest("tenant_id is required", field: "tenant_id", code: "missing_field")
            }
            tenantID = fallback.id
        }
        return try await Self.creatingIdentity(givenID) {
            try await store.applications.create(
                tenantID: tenantID, name: name, description: description, verifiesCustomUserID: input.verifyCustomUserID ?? true,
                id: givenID, apiKey: givenKey)
        }
    }

    /// Changes what `input` sets; the uuid and the tenant never change.
    func updateApplication(_ app: App, _ input: ApplicationInput) async throws -> App {
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
        return updated
    }

    /// Deletes an application that has no platforms left.
    func deleteApplication(_ app: App) async throws {
        switch try await store.applications.delete(id: app.id) {
        case .deleted: return
        case .notFound: throw APIError.notFound("application")
        case .inUse: throw APIError.conflict("the application still has platforms; delete them first")
        }
    }

    /// A new api key (shown once); the old one stops working at once.
    func regenerateAPIKey(_ app: App) async throws -> (App, apiKey: String) {
        guard let apiKey = try await store.applications.regenerateAPIKey(id: app.id) else {
            throw APIError.notFound("application")
        }
        return (app, apiKey)
    }

    /// One page of an application's devices and how many match.
    func devices(of app: App, _ query: DeviceQuery) async throws -> (devices: [Device], total: Int) {
        try await store.devices.search(applicationID: app.id, filter: query.filter, page: query.page, size: query.size)
    }

    // MARK: Platforms

    /// The application's platforms.
    func platforms(of app: App) async throws -> [Platform] {
        try await store.platforms.list(applicationID: app.id)
    }

    /// A new platform and its secret (shown once).
    func createPlatform(in app: App, _ input: PlatformInput) async throws -> (Platform, secret: String) {
        guard let rawType = input.type else {
            throw APIError.badRequest("type is required (ios, android, web or windows)", field: "type", code: "missing_field")
        }
        let type = try PlatformType.parse(rawType, field: "type")
        let name = try AdminValidation.name(input.name ?? type.rawValue, field: "name")
        let (givenID, givenSecret) = try AdminValidation.givenIdentity(uuid: input.uuid, secret: input.secret, secretField: "secret")
        let credentials = try input.credentials?.validate(for: type)
        let fcmNotification = try input.checkedFCMNotification(for: type) ?? false
        return try await Self.creatingIdentity(givenID) {
            try await store.platforms.create(
                applicationID: app.id, name: name, type: type, credentials: credentials, id: givenID, secret: givenSecret,
                fcmNotification: fcmNotification)
        }
    }

    /// Changes the name or the credentials; the type is fixed.
    func updatePlatform(_ platform: Platform, _ input: PlatformInput) async throws -> Platform {
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
        return updated
    }

    /// Deletes a platform that has no devices left.
    func deletePlatform(_ platform: Platform) async throws {
        switch try await store.platforms.delete(id: platform.id) {
        case .deleted: return
        case .notFound: throw APIError.notFound("platform")
        case .inUse: throw APIError.conflict("the platform still has devices; it cannot be deleted")
        }
    }

    /// A new secret (shown once); the old one stops working at once.
    func regenerateSecret(_ platform: Platform) async throws -> (Platform, secret: String) {
        guard let secret = try await store.platforms.regenerateSecret(id: platform.id) else {
            throw APIError.notFound("platform")
        }
        return (platform, secret)
    }

    // MARK: Identities

    /// Runs a creation that may use a uuid the caller gave: a uuid some application or platform
    /// of any tenant already has is a 409 naming `uuid`.
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
}
