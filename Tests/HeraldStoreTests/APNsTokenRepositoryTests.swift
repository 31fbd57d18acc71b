import HeraldCore
import HeraldStore
import HeraldTestSupport
import Synchronization
import Testing

import struct Foundation.UUID

/// The APNs provider token a platform's processes share: sealed at rest, renewed under a lock
/// that makes one process sign while the others wait and take its token.
@Suite struct APNsTokenRepositoryTests {
    /// Signs a numbered token when there is none (or another key's); counts the signatures.
    final class Signer: Sendable {
        private let count = Mutex(0)
        var signed: Int { count.withLock { $0 } }

        func renew(_ stored: APNsSharedProviderToken?, key: String = "key-1") -> APNsSharedProviderToken {
            if let stored, stored.keyFingerprint == key { return stored }
            let number = count.withLock { count -> Int in
                count += 1
                return count
            }
            return APNsSharedProviderToken(
                token: "eyJ.secret-jwt-\(number).sig", issuedAt: 1_800_000_000 + Int64(number), keyFingerprint: key)
        }
    }

    @Test(arguments: Backend.available)
    func theTokenIsStoredSealedAndReusedUntilTheKeyChanges(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let signer = Signer()
            let first = try await db.store.apnsTokens.renew(platformID: fixture.platform.id) { signer.renew($0) }
            #expect(first.token == "eyJ.secret-jwt-1.sig")
            #expect(try await db.store.apnsTokens.renew(platformID: fixture.platform.id) { signer.renew($0) } == first)
            #expect(signer.signed == 1)
            // At rest: sealed, not the JWT.
            let row = try #require(try await db.database.query("SELECT token_sealed FROM apns_provider_tokens").first)
            let sealed = try row.blob("token_sealed")
            #expect(!String(decoding: sealed, as: UTF8.self).contains("secret-jwt"))
            // Another key's token is replaced.
            let other = try await db.store.apnsTokens.renew(platformID: fixture.platform.id) { signer.renew($0, key: "key-2") }
            #expect(other.token == "eyJ.secret-jwt-2.sig")
            #expect(try await db.store.apnsTokens.renew(platformID: fixture.platform.id) { signer.renew($0, key: "key-2") } == other)
            // Each platform has its own.
            let second = try await Fixture.make(db.store)
            #expect(
                try await db.store.apnsTokens.renew(platformID: second.platform.id) { signer.renew($0) }.token == "eyJ.secret-jwt-3.sig")
            // Gone with its platform.
            try await db.database.query("DELETE FROM devices")
            #expect(try await db.store.platforms.delete(id: fixture.platform.id) == .deleted)
            let left = try await db.database.query("SELECT platform_id FROM apns_provider_tokens")
            #expect(try left.map { try $0.uuid("platform_id") } == [second.platform.id])
        }
    }

    /// Many renewals at once, from separate connection pools on PostgreSQL (as separate processes
    /// would be): the first signs, every other one waits for its lock and takes that token.
    @Test(arguments: Backend.available)
    func concurrentRenewalsSignOnce(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            var stores = [db.store]
            if let url = db.databaseURL {
                for _ in 0..<2 {
                    let database = try PostgresStoreDatabase(url: url, maximumConnections: 4, logger: TestDatabase.logger)
                    stores.append(
                        Store(
                            database: database, secretBox: try SecretBox(keyBytes: Array(repeating: 7, count: 32)),
                            logger: TestDatabase.logger))
                }
            }
            let signer = Signer()
            let tokens = try await withThrowingTaskGroup(of: APNsSharedProviderToken.self) { group in
                for index in 0..<30 {
                    let store = stores[index % stores.count]
                    group.addTask { try await store.apnsTokens.renew(platformID: fixture.platform.id) { signer.renew($0) } }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1.token) }
            }
            for store in stores.dropFirst() { await store.database.shutdown() }
            #expect(tokens == ["eyJ.secret-jwt-1.sig"])
            #expect(signer.signed == 1)
        }
    }
}
