import Foundation
import HeraldCore
import Testing

/// When a push goes out: `scheduleAt`, `scheduleIn`, `scheduleLocal`, the send-now threshold and `rate`.
@Suite struct PushScheduleTests {
    func push(_ json: String, now: Int64 = 1_800_000_000_000) throws -> Push {
        try JSONDecoder().decode(PushInput.self, from: Data(json.utf8)).validated(now: now)
    }

    func refusal(_ json: String) -> ValidationError? {
        do {
            _ = try push(json)
            return nil
        } catch let error as ValidationError {
            return error
        } catch {
            return nil
        }
    }

    @Test func aTimeInThePastOrWithinTheThresholdIsSentNow() throws {
        let now: Int64 = 1_800_000_000_000
        let base = #"{"message":{"body":"x"},"target":{"platform":"all"},"#
        #expect(PushSchedule.of(try push(base + #""scheduleAt":1}"#), now: now, sendImmediatelyWithin: .seconds(60)) == .now)
        #expect(PushSchedule.of(try push(base + #""scheduleIn":60}"#), now: now, sendImmediatelyWithin: .seconds(60)) == .now)
        #expect(PushSchedule.of(try push(base + #""scheduleIn":61}"#), now: now, sendImmediatelyWithin: .seconds(60)) == .at(now + 61_000))
        #expect(PushSchedule.of(try push(base + #""scheduleIn":1}"#), now: now, sendImmediatelyWithin: .zero) == .at(now + 1000))
        #expect(PushSchedule.of(try push(base + #""expiryTime":5}"#), now: now, sendImmediatelyWithin: .zero) == .now)
    }

    @Test func scheduleInIsSecondsEvenWhenItLooksLikeMilliseconds() throws {
        // The seed's second example (7200000) is read as seconds: 83⅓ days, not two hours.
        let now: Int64 = 1_800_000_000_000
        let scheduled = try push(#"{"message":{"body":"x"},"target":{"platform":"all"},"scheduleIn":7200000}"#, now: now)
        #expect(scheduled.scheduledAt == now + 7_200_000_000)
    }

    @Test func badTimingAndRatesAreRefusedNamingTheField() throws {
        let base = #"{"message":{"body":"x"},"target":{"platform":"all"},"#
        #expect(refusal(base + #""scheduleAt":1,"scheduleLocal":"2026-12-24T09:00"}"#)?.field == "scheduleLocal")
        #expect(refusal(base + #""scheduleIn":1,"scheduleLocal":"2026-12-24T09:00"}"#)?.field == "scheduleLocal")
        #expect(refusal(base + #""scheduleAt":1,"scheduleIn":2}"#)?.field == "scheduleIn")
        #expect(refusal(base + #""scheduleLocal":"2026-12-24 09:00"}"#)?.field == "scheduleLocal")
        #expect(refusal(base + #""scheduleLocal":"2026-12-24T09:00Z"}"#)?.field == "scheduleLocal")
        #expect(refusal(base + #""scheduleLocal":"2026-02-30T09:00"}"#)?.field == "scheduleLocal")
        #expect(refusal(base + #""scheduleAt":-5}"#)?.field == "scheduleAt")
        #expect(refusal(base + #""scheduleIn":9223372036854775807}"#)?.field == "scheduleIn")
        #expect(refusal(base + #""rate":{"per_second":0}}"#)?.field == "rate.per_second")
        #expect(refusal(base + #""rate":{}}"#)?.field == "rate.per_second")
        #expect(try push(base + #""rate":{"per_second":50}}"#).ratePerSecond == 50)
    }

    @Test func localTimesParseWithOrWithoutSeconds() throws {
        #expect(LocalDateTime("2026-12-24T09:00")?.description == "2026-12-24T09:00:00")
        #expect(LocalDateTime("2028-02-29T23:59:59")?.description == "2028-02-29T23:59:59")
        #expect(LocalDateTime("2027-02-29T10:00") == nil)
        #expect(LocalDateTime("2026-12-24T24:00") == nil)
        #expect(LocalDateTime("2026-12-24T09:00+01:00") == nil)
        let christmas = try #require(LocalDateTime("2026-12-24T09:00"))
        // 2026-12-24T09:00Z
        #expect(christmas.instant(in: TimeZone(identifier: "UTC")!) == 1_798_102_800_000)
        #expect(christmas.instant(in: TimeZone(identifier: "Europe/Paris")!) == 1_798_102_800_000 - 3_600_000)
        #expect(christmas.instant(in: TimeZone(identifier: "America/New_York")!) == 1_798_102_800_000 + 5 * 3_600_000)
    }

    @Test func localTimeSlotsGroupZonesByInstantAndPutZonelessDevicesWithTheDefault() throws {
        let christmas = try #require(LocalDateTime("2026-12-24T09:00"))
        let slots = PushSchedule.slots(
            for: christmas, defaultZone: "Europe/Berlin", zones: ["Europe/Paris", "Europe/Berlin", "Asia/Tokyo", "America/New_York"])
        #expect(slots.map(\.dueAt) == slots.map(\.dueAt).sorted())
        let byZone = Dictionary(uniqueKeysWithValues: slots.flatMap { slot in slot.timeZones.map { ($0, slot.dueAt) } })
        #expect(byZone["Europe/Paris"] == byZone["Europe/Berlin"])
        #expect(byZone[""] == byZone["Europe/Berlin"])
        #expect(byZone["UTC"] == 1_798_102_800_000)
        let tokyo: Int64 = try #require(byZone["Asia/Tokyo"])
        #expect(tokyo == 1_798_102_800_000 - 9 * 3_600_000)
        #expect(slots.count == 4)
        // Every zone Foundation knows lands in some slot: a device registering later is covered.
        let all = PushSchedule.slots(for: christmas, defaultZone: "UTC")
        #expect(Set(all.flatMap(\.timeZones)).isSuperset(of: TimeZone.knownTimeZoneIdentifiers))
    }
}
