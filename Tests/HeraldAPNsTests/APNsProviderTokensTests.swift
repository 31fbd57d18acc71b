import Crypto
import HeraldAPNs
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

/// Several processes' `APNsProviderTokens` on one store (the database, played here by one
/// in-memory store they all use) present one token: one signs, the others take it.
@Suite struct APNsProviderTokensTests {
    /// A store that counts its visits and the tokens signed under it.
    final class CountingStore: APNsProviderTokenStore {
        private let inner = APNsLocalProviderTokenStore()
        private let counts = Mutex((visits: 0, signed: 0))

        var visits: Int { counts.withLock { $0.visits } }
        var signed: Int { counts.withLock { $0.signed } }

        func renew(_ renew: @escaping @Sendable (APNsSharedProviderToken?) throws -> APNsSharedProviderToken) async throws
            -> APNsSharedProviderToken
        {
            try await inner.renew { stored in
                let token = try renew(stored)
                self.counts.withLock {
                    $0.visits += 1
                    if token != stored { $0.signed += 1 }
                }
                return token
            }
        }
    }

    static func generator(_ key: P256.Signing.PrivateKey = P256.Signing.PrivateKey()) throws -> APNsTokenGenerator {
        try APNsTokenGenerator(
            credentials: APNsTokenCredentials(
                privateKeyPEM: key.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example.app",
                environment: .sandbox))
    }

    func token(_ tokens: APNsProviderTokens) async throws -> String {
        try #require(try await tokens.lease()).token
    }

    @Test func threeProcessesShareOneTokenAndOneRenewal() async throws {
        let clock = TestClock()
        let store = CountingStore()
        let generator = try Self.generator()
        let processes = (0..<3).map { _ in APNsProviderTokens(generator: generator, store: store, clock: clock.epochClock) }
        var first: Set<String> = []
        for process in processes { first.insert(try await token(process)) }
        #expect(first.count == 1)
        #expect(store.signed == 1)
        // Cached: no trip to the store while the token is good.
        clock.advance(by: .seconds(49 * 60))
        for process in processes { #expect(try await token(process) == first.first) }
        #expect(store.visits == 3)
        // Due: the first to ask signs, the others take its token.
        clock.advance(by: .seconds(60))
        var second: Set<String> = []
        for process in processes { second.insert(try await token(process)) }
        #expect(second.count == 1)
        #expect(second != first)
        #expect(store.signed == 2)
        #expect(store.visits == 6)
    }

    /// A refused token is replaced once: the first process refused signs, the others refused
    /// take its replacement, and none signs again for the replacement's age.
    @Test func aRefusedTokenIsReplacedOnceForEveryProcess() async throws {
        let clock = TestClock()
        let store = CountingStore()
        let generator = try Self.generator()
        let processes = (0..<3).map { _ in APNsProviderTokens(generator: generator, store: store, clock: clock.epochClock) }
        var leases: [APNsTokenStateMachine.Lease] = []
        for process in processes { leases.append(try #require(try await process.lease())) }
        let refused = leases[0].token
        clock.advance(by: .seconds(25 * 60))
        var replacements: Set<String> = []
        for (process, lease) in zip(processes, leases) {
            #expect(process.rejected(lease) == .retry)
            replacements.insert(try await token(process))
        }
        #expect(replacements.count == 1)
        #expect(!replacements.contains(refused))
        #expect(store.signed == 2)
        // The replacement is used until it is due, by the processes that took it too.
        clock.advance(by: .seconds(21 * 60))
        for process in processes { #expect(try await token(process) == replacements.first) }
        #expect(store.signed == 2)
    }

    /// Batches of one process that all need a new token at once make one trip to the store.
    @Test func concurrentBatchesMakeOneTripToTheStore() async throws {
        let clock = TestClock()
        let store = CountingStore()
        let tokens = APNsProviderTokens(generator: try Self.generator(), store: store, clock: clock.epochClock)
        let seen = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await token(tokens) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(seen.count == 1)
        #expect(store.visits == 1)
    }

    /// A token stored for credentials since replaced (another key) is not reused.
    @Test func aTokenOfOtherCredentialsIsNotReused() async throws {
        let clock = TestClock()
        let store = CountingStore()
        let old = APNsProviderTokens(generator: try Self.generator(), store: store, clock: clock.epochClock)
        let oldToken = try await token(old)
        let new = APNsProviderTokens(generator: try Self.generator(), store: store, clock: clock.epochClock)
        #expect(try await token(new) != oldToken)
        #expect(store.signed == 2)
    }

    /// A store that fails (the database is down) is worth a retry; a key that cannot sign is not.
    @Test func aFailingStoreIsNotUnusableCredentials() async throws {
        struct Down: APNsProviderTokenStore {
            struct Unreachable: Error {}
            func renew(_ renew: @escaping @Sendable (APNsSharedProviderToken?) throws -> APNsSharedProviderToken) async throws
                -> APNsSharedProviderToken
            { throw Unreachable() }
        }
        let tokens = APNsProviderTokens(generator: try Self.generator(), store: Down(), clock: TestClock().epochClock)
        let error = await #expect(throws: APNsProviderTokenError.self) { try await tokens.lease() }
        #expect(error?.meansCredentialsUnusable == false)
    }
}
