import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import ServiceLifecycle
import Testing

/// Raw events go after the retention period; the aggregates stay.
@Suite struct AnalyticsRetentionTests {
    @Test(arguments: Backend.available)
    func theServiceDeletesEventsPastRetentionAndStopsOnShutdown(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db in
            let fixture = try await Fixture.make(db.store)
            let receipt = UUID()
            let event = AnalyticsEvent(type: AnalyticsEventType.received, time: clock.now, receiptID: receipt.uuidString.lowercased())
            try await db.store.analytics.record([event, event, event], applicationID: fixture.app.id, platformID: fixture.platform.id)

            let service = AnalyticsRetentionService(
                store: db.store, configuration: AnalyticsConfiguration(retentionDays: 30, cleanupInterval: .milliseconds(10)),
                clock: clock.epochClock, logger: TestDatabase.logger)
            // 30 days later the events are still within retention.
            clock.advance(30 * 86_400_000)
            #expect(await service.cleanUp() == 0)

            // The running service removes them once they are older (polled, with a deadline).
            let group = ServiceGroup(configuration: .init(services: [service], logger: TestDatabase.logger))
            let running = Task { try await group.run() }
            clock.advance(1)
            let deadline = ContinuousClock.now + .seconds(10)
            while try await db.store.analytics.eventCount(applicationID: fixture.app.id) > 0 {
                guard ContinuousClock.now < deadline else {
                    running.cancel()
                    throw TestFailure(message: "the retention service never deleted the events")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            await group.triggerGracefulShutdown()
            try await running.value
            let counts = try await db.store.analytics.counts(pushID: receipt, applicationID: fixture.app.id)
            #expect(counts == [AnalyticsEventType.received: 3])
        }
    }
}
