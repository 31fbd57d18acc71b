import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct TenantAppPlatformTests {
    @Test(arguments: Backend.available)
    func tenantNamesAreUnique(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let tenant = try #require(try await db.store.tenants.create(name: "acme"))
            #expect(try await db.store.tenants.create(name: "acme") == nil)
            #expect(try await db.store.tenants.find(id: tenant.id) == tenant)
            #expect(try await db.store.tenants.find(name: "acme") == tenant)
        }
    }

    @Test(arguments: Backend.available)
    func apiKeysAuthenticateUntilRegenerated(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let tenant = try #require(try await db.store.tenants.create(name: "t"))
            let (app, key) = try await db.store.applications.create(tenantID: tenant.id, name: "News", description: "d")
            #expect(try await db.store.applications.authenticate(id: app.id, apiKey: key)?.id == app.id)
            #expect(try await db.store.applications.authenticate(id: app.id, apiKey: key + "x") == nil)
            #expect(try await db.store.applications.authenticate(id: UUID(), apiKey: key) == nil)
            let newKey = try #require(try await db.store.applications.regenerateAPIKey(id: app.id))
            #expect(newKey != key)
            #expect(try await db.store.applications.authenticate(id: app.id, apiKey: key) == nil)
            #expect(try await db.store.applications.authenticate(id: app.id, apiKey: newKey)?.id == app.id)
        }
    }

    @Test(arguments: Backend.available)
    func aCopyOfTheDatabaseRevealsNoSecret(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let (_, adminToken) = try await db.store.adminTokens.create(tenantID: nil, name: "root")
            let credentials = try #require(try await db.store.platforms.credentials(id: fixture.platform.id))
            guard case .apnsToken(let apns) = credentials else {
                Issue.record("wrong credentials")
                return
            }
            var dump = ""
            for table in ["tenants", "admin_tokens", "applications", "platforms"] {
                for row in try await db.database.query(SQL(unsafeText: "SELECT * FROM \(table)")) {
                    for value in row.values {
                        switch value {
                        case .text(let text): dump += text + "\n"
                        case .blob(let bytes): dump += String(decoding: bytes, as: UTF8.self) + "\n"
                        default: break
                        }
                    }
                }
            }
            #expect(!dump.contains(fixture.apiKey))
            #expect(!dump.contains(fixture.platformSecret))
            #expect(!dump.contains(adminToken))
            #expect(!dump.contains("PRIVATE KEY"))
            #expect(!dump.contains(String(apns.privateKeyPEM.split(separator: "\n")[1])))
        }
    }

    @Test(arguments: Backend.available)
    func platformSecretsAndCredentialsRoundTripSealed(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store, type: .web)
            #expect(try await db.store.platforms.secret(id: fixture.platform.id) == fixture.platformSecret)
            #expect(try await db.store.platforms.authenticate(id: fixture.platform.id, secret: fixture.platformSecret)?.type == .web)
            let newSecret = try #require(try await db.store.platforms.regenerateSecret(id: fixture.platform.id))
            #expect(try await db.store.platforms.authenticate(id: fixture.platform.id, secret: fixture.platformSecret) == nil)
            #expect(try await db.store.platforms.authenticate(id: fixture.platform.id, secret: newSecret) != nil)
            #expect(try await db.store.platforms.secret(id: fixture.platform.id) == newSecret)
            guard case .webPush(let vapid) = try await db.store.platforms.credentials(id: fixture.platform.id) else {
                Issue.record("credentials lost")
                return
            }
            #expect(fixture.platform.credentialsSummary?.fields["public_key"] == vapid.publicKey)
        }
    }

    @Test(arguments: Backend.available)
    func deletesAreRefusedWhileSomethingDependsOnTheRow(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            #expect(try await db.store.tenants.delete(id: fixture.app.tenantID) == .inUse)
            #expect(try await db.store.applications.delete(id: fixture.app.id) == .inUse)
            let registration = try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true)
            let device = try await db.store.devices.register(on: fixture.platform, registration)
            #expect(try await db.store.platforms.delete(id: fixture.platform.id) == .inUse)
            #expect(try await db.store.devices.delete(platformID: fixture.platform.id, uuid: device.uuid))
            #expect(try await db.store.platforms.delete(id: fixture.platform.id) == .deleted)
            #expect(try await db.store.platforms.delete(id: fixture.platform.id) == .notFound)
            #expect(try await db.store.applications.delete(id: fixture.app.id) == .deleted)
            #expect(try await db.store.tenants.delete(id: fixture.app.tenantID) == .deleted)
        }
    }

    @Test(arguments: Backend.available)
    func adminTokensAreScopedAndRevocable(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            #expect(try await !db.store.adminTokens.hasRootToken())
            let tenant = try #require(try await db.store.tenants.create(name: "t"))
            let (scoped, token) = try await db.store.adminTokens.create(tenantID: tenant.id, name: "ops")
            #expect(try await !db.store.adminTokens.hasRootToken())
            #expect(try await db.store.adminTokens.authenticate(token)?.tenantID == tenant.id)
            #expect(try await db.store.adminTokens.authenticate("nope") == nil)
            #expect(try await !db.store.adminTokens.delete(id: scoped.id, tenantID: UUID()))
            #expect(try await db.store.adminTokens.delete(id: scoped.id, tenantID: tenant.id))
            #expect(try await db.store.adminTokens.authenticate(token) == nil)
        }
    }
}
