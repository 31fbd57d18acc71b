import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import ServiceLifecycle
import Testing

/// The background cleanup of expired topics, in a service group, on the test's clock.
@Suite struct TopicCleanupServiceTests {
    @Test(arguments: Backend.available)
    func theServiceRemovesExpiredSubscriptionsAndStopsOnShutdown(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db in
            let fixture = try await Fixture.make(db.store)
            _ = try await db.store.topics.create(
                applicationID: fixture.app.id,
                [TopicRequest(name: "gone", expiresAt: clock.now + 60_000), TopicRequest(name: "kept", expiresAt: nil)])
            for _ in 0..<3 {
                _ = try await db.store.devices.register(
                    on: fixture.platform,
                    try RegistrationInput(registrationToken: randomAPNsToken(), tags: .replace(["gone", "kept"]))
                        .validated(for: .ios, requireToken: true))
            }
            let (passes, reported) = AsyncStream.makeStream(of: TopicRepository.Cleanup.self)
            let service = TopicCleanupService(
                store: db.store, interval: .seconds(3600), clock: clock.epochClock, logger: TestDatabase.logger,
                onPass: { reported.yield($0) })

            // Before expiry a pass removes nothing.
            #expect(await service.cleanUp() == TopicRepository.Cleanup())
            clock.advance(60_000)
            let group = ServiceGroup(configuration: .init(services: [service], logger: TestDatabase.logger))
            let running = Task { try await group.run() }
            var iterator = passes.makeAsyncIterator()
            #expect(await iterator.next() == TopicRepository.Cleanup(subscriptions: 3, topics: 1))
            await group.triggerGracefulShutdown()
            try await running.value

            let (topics, _) = try await db.store.topics.list(applicationID: fixture.app.id, query: nil, hasExpiry: nil, page: 1, size: 10)
            #expect(topics.map(\.name) == ["kept"])
            let (devices, _) = try await db.store.devices.search(applicationID: fixture.app.id, filter: DeviceFilter(), page: 1, size: 10)
            #expect(devices.allSatisfy { $0.tags == ["kept"] })
        }
    }
}
