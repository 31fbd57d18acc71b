import Foundation
import HeraldCore
import Testing

@testable import HeraldServer
@testable import HeraldStore

/// What the Schedules page shows of a recurring schedule's past occurrences.
@Suite struct DashboardRecurrenceViewTests {
    typealias Controller = DashboardController<HeraldRequestContext>

    func counts(_ occurrence: PastOccurrence) -> String? {
        let app = App(id: UUID(), tenantID: UUID(), name: "news", description: "", createdAt: 0, updatedAt: 0)
        let recurrence = StoredRecurrence(cron: "0 8 * * *", timeZone: "", until: nil, count: nil, local: true)
        let view = Controller.recurrenceView(recurrence, next: 1_800_000_000_000, now: 1_700_000_000_000, past: [occurrence], app: app)
        return (view["past"] as? [[String: Any]])?.first?["counts"] as? String
    }

    @Test func aLateLocalOccurrenceShowsTheZonesItMissed() {
        var late = PastOccurrence(
            dueAt: 1_700_000_000_000, localTime: "2023-11-15T08:00:00", state: .fired, recordedAt: 1_700_050_000_000,
            pushID: UUID().lowercasedString, skippedUntil: nil, missedTimeZones: 140, status: "sending", targeted: 10, delivered: 4,
            failed: 0)
        #expect(counts(late) == "10 targeted, 4 delivered, 0 failed; 140 time zones missed (no server ran at their time)")
        late.missedTimeZones = nil
        #expect(counts(late) == "10 targeted, 4 delivered, 0 failed")
    }
}
