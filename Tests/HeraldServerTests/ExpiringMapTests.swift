import Testing

@testable import HeraldServer

/// The bounded map behind the dashboard's sessions and sign-in throttle.
@Suite struct ExpiringMapTests {
    @Test func anEntryIsGoneFromItsExpiry() {
        let map = ExpiringMap<String, Int>(capacity: 10)
        map.modify("a", at: 0) { $0 = .init(value: 1, expiresAt: 100) }
        #expect(map.entry("a", at: 99)?.value == 1)
        #expect(map.entry("a", at: 100) == nil)
        // Once expired, a modification starts from nothing.
        let seen = map.modify("a", at: 50) { $0?.value }
        #expect(seen == nil)
    }

    @Test func pastCapacityTheExpiredGoThenTheSoonestToExpire() {
        let map = ExpiringMap<String, Int>(capacity: 3)
        map.modify("old", at: 0) { $0 = .init(value: 0, expiresAt: 10) }
        map.modify("soon", at: 0) { $0 = .init(value: 1, expiresAt: 200) }
        map.modify("late", at: 0) { $0 = .init(value: 2, expiresAt: 300) }
        // At 20 "old" has expired: it makes the room.
        map.modify("new", at: 20) { $0 = .init(value: 3, expiresAt: 400) }
        #expect(map.entry("soon", at: 20)?.value == 1)
        // Full of live entries: the one closest to expiry goes.
        map.modify("newer", at: 30) { $0 = .init(value: 4, expiresAt: 500) }
        #expect(map.entry("soon", at: 30) == nil)
        #expect(map.entry("late", at: 30)?.value == 2)
        #expect(map.entry("newer", at: 30)?.value == 4)
        // Changing a key that is there makes no room.
        map.modify("late", at: 30) { $0?.value = 20 }
        #expect(map.entry("new", at: 30)?.value == 3)
        #expect(map.entry("late", at: 30)?.value == 20)
    }
}
