import HeraldCore
import Testing

@testable import HeraldServer

/// The instant `milliseconds` after the epoch.
private func t(_ milliseconds: Int64) -> EpochClock.Instant { EpochClock.Instant(epochMilliseconds: milliseconds) }

/// The bounded map behind the dashboard's sessions and sign-in throttle.
@Suite struct ExpiringMapTests {
    @Test func anEntryIsGoneFromItsExpiry() {
        let map = ExpiringMap<String, Int>(capacity: 10)
        map.modify("a", at: t(0)) { $0 = .init(value: 1, expiresAt: t(100)) }
        #expect(map.entry("a", at: t(99))?.value == 1)
        #expect(map.entry("a", at: t(100)) == nil)
        // Once expired, a modification starts from nothing.
        let seen = map.modify("a", at: t(50)) { $0?.value }
        #expect(seen == nil)
    }

    @Test func pastCapacityTheExpiredGoThenTheSoonestToExpire() {
        let map = ExpiringMap<String, Int>(capacity: 3)
        map.modify("old", at: t(0)) { $0 = .init(value: 0, expiresAt: t(10)) }
        map.modify("soon", at: t(0)) { $0 = .init(value: 1, expiresAt: t(200)) }
        map.modify("late", at: t(0)) { $0 = .init(value: 2, expiresAt: t(300)) }
        // At 20 "old" has expired: it makes the room.
        map.modify("new", at: t(20)) { $0 = .init(value: 3, expiresAt: t(400)) }
        #expect(map.entry("soon", at: t(20))?.value == 1)
        // Full of live entries: the one closest to expiry goes.
        map.modify("newer", at: t(30)) { $0 = .init(value: 4, expiresAt: t(500)) }
        #expect(map.entry("soon", at: t(30)) == nil)
        #expect(map.entry("late", at: t(30))?.value == 2)
        #expect(map.entry("newer", at: t(30))?.value == 4)
        // Changing a key that is there makes no room.
        map.modify("late", at: t(30)) { $0?.value = 20 }
        #expect(map.entry("new", at: t(30))?.value == 3)
        #expect(map.entry("late", at: t(30))?.value == 20)
    }
}
