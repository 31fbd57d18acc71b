import Synchronization
import Testing

@testable import HeraldHTTP

@Suite struct BoundedConcurrencyTests {
    /// Results come in the elements' order, and `limit` steps run at once, never more.
    @Test func keepsOrderAndLimit() async {
        let running = Mutex((now: 0, most: 0))
        // The first steps wait (polling, with a deadline) until `limit` of them run together:
        // a loop that ran fewer at once would leave `most` below the limit.
        let deadline = ContinuousClock.now + .seconds(10)
        let never: @Sendable () -> Bool = { false }
        let results = await BoundedConcurrency.map(Array(0..<50), limit: 4, notStarted: -1, stopStarting: never) { element in
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            while running.withLock({ $0.most }) < 4, ContinuousClock.now < deadline { await Task.yield() }
            running.withLock { $0.now -= 1 }
            return element * 2
        }
        #expect(results == (0..<50).map { $0 * 2 })
        #expect(running.withLock { $0.most } == 4)
    }

    /// Once told to stop starting, the elements not started get `notStarted`; the started ones finish.
    @Test func stopsStartingWhenTold() async {
        let started = Mutex(0)
        let afterThree: @Sendable () -> Bool = { started.withLock { $0 } >= 3 }
        let results = await BoundedConcurrency.map(Array(0..<10), limit: 2, notStarted: "not started", stopStarting: afterThree) {
            element in
            started.withLock { $0 += 1 }
            return "sent \(element)"
        }
        // Steps start while fewer than 3 have; a step added then may not have begun when the
        // next is added, so with 2 at a time at most one more than 3 starts.
        let sent = results.filter { $0.hasPrefix("sent") }
        #expect((3...4).contains(sent.count))
        #expect(results.prefix(sent.count) == sent[...])
        #expect(results.dropFirst(sent.count).allSatisfy { $0 == "not started" })
    }
}
