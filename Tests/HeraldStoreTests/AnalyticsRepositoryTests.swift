import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Testing

@Suite struct AnalyticsRepositoryTests {
    let hour: Int64 = 3_600_000

    @Test(arguments: Backend.available)
    func eventsAreAggregatedByPushGeofenceTypeAndHour(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db in
            let fixture = try await Fixture.make(db.store)
            let other = try await Fixture.make(db.store)
            let push = UUID()
            let receipt = push.uuidString.lowercased()
            let base = clock.now - clock.now % hour
            let events = [
                AnalyticsEvent(type: AnalyticsEventType.received, time: base + 10, receiptID: receipt),
                AnalyticsEvent(type: AnalyticsEventType.received, time: base + 20, receiptID: receipt),
                AnalyticsEvent(type: AnalyticsEventType.opened, time: base + hour + 5, receiptID: receipt),
                AnalyticsEvent(type: AnalyticsEventType.geofenceTriggered, time: base + 2 * hour, geofenceID: "7", locationID: "3"),
                AnalyticsEvent(type: "something_new", time: base + 30),
            ]
            try await db.store.analytics.record(events, applicationID: fixture.app.id, platformID: fixture.platform.id)
            // Another app's events with the same receipt do not count for this one.
            try await db.store.analytics.record(
                [AnalyticsEvent(type: AnalyticsEventType.opened, time: base, receiptID: receipt)],
                applicationID: other.app.id, platformID: other.platform.id)

            let counts = try await db.store.analytics.counts(pushID: push, applicationID: fixture.app.id)
            #expect(counts == [AnalyticsEventType.received: 2, AnalyticsEventType.opened: 1])
            #expect(
                try await db.store.analytics.counts(geofenceID: 7, applicationID: fixture.app.id) == [
                    AnalyticsEventType.geofenceTriggered: 1
                ])

            let hourly = try await db.store.analytics.summary(
                applicationID: fixture.app.id, from: base, to: base + 4 * hour, interval: .hour)
            #expect(hourly.map(\.start) == [base, base + hour, base + 2 * hour, base + 3 * hour])
            #expect(hourly[0].counts == [AnalyticsEventType.received: 2, "something_new": 1])
            #expect(hourly[1].counts == [AnalyticsEventType.opened: 1])
            #expect(hourly[2].counts == [AnalyticsEventType.geofenceTriggered: 1])
            #expect(hourly[3].counts.isEmpty)
            let daily = try await db.store.analytics.summary(applicationID: fixture.app.id, from: base, to: base + 1, interval: .day)
            #expect(daily.count == 1)
            #expect(daily[0].start == base - base % 86_400_000)
        }
    }

    @Test(arguments: Backend.available)
    func concurrentBatchesAddUp(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db in
            let fixture = try await Fixture.make(db.store)
            let receipt = UUID()
            let time = EpochClock.system.now.epochMilliseconds
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let batch = (0..<50).map { index in
                            AnalyticsEvent(
                                type: index % 2 == 0 ? AnalyticsEventType.received : AnalyticsEventType.opened, time: time,
                                receiptID: receipt.uuidString.lowercased())
                        }
                        try await db.store.analytics.record(batch, applicationID: fixture.app.id, platformID: fixture.platform.id)
                    }
                }
                try await group.waitForAll()
            }
            let counts = try await db.store.analytics.counts(pushID: receipt, applicationID: fixture.app.id)
            #expect(counts == [AnalyticsEventType.received: 500, AnalyticsEventType.opened: 500])
            #expect(try await db.store.analytics.eventCount(applicationID: fixture.app.id) == 1000)
        }
    }

    @Test(arguments: Backend.available)
    func retentionDeletesRawEventsAndKeepsAggregates(_ backend: Backend) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db in
            let fixture = try await Fixture.make(db.store)
            let receipt = UUID()
            let old = (0..<25).map { _ in
                AnalyticsEvent(type: AnalyticsEventType.received, time: clock.now, receiptID: receipt.uuidString.lowercased())
            }
            try await db.store.analytics.record(old, applicationID: fixture.app.id, platformID: fixture.platform.id)
            clock.advance(31 * 86_400_000)
            try await db.store.analytics.record(
                [AnalyticsEvent(type: AnalyticsEventType.opened, time: clock.now, receiptID: receipt.uuidString.lowercased())],
                applicationID: fixture.app.id, platformID: fixture.platform.id)

            let deleted = try await db.store.analytics.deleteEvents(receivedBefore: clock.now - 30 * 86_400_000, batchSize: 10)
            #expect(deleted == 25)
            #expect(try await db.store.analytics.eventCount(applicationID: fixture.app.id) == 1)
            let counts = try await db.store.analytics.counts(pushID: receipt, applicationID: fixture.app.id)
            #expect(counts == [AnalyticsEventType.received: 25, AnalyticsEventType.opened: 1])
        }
    }
}
