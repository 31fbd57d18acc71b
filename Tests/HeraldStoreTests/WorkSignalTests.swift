import HeraldStore
import Testing

/// The wake-up between the store and idle delivery workers. Each wait below could last
/// two minutes; finishing within seconds shows that the ring (or the cancellation) ended it.
@Suite struct WorkSignalTests {
    private let long = Duration.seconds(120)
    /// Far below `long`, and far above what a loaded machine takes to run a woken task (12–16 s
    /// was seen with four builds and test suites on two cores).
    private let prompt = Duration.seconds(40)

    private func elapsed(_ body: () async -> Void) async -> Duration {
        let start = ContinuousClock.now
        await body()
        return ContinuousClock.now - start
    }

    @Test func aRingBeforeTheWaitEndsItAtOnce() async {
        let signal = WorkSignal()
        let seen = signal.generation
        signal.ring()
        #expect(await elapsed { await signal.wait(after: seen, upTo: long) } < prompt)
        #expect(signal.generation == seen + 1)
    }

    @Test func aRingWakesEveryWaiter() async {
        let signal = WorkSignal()
        let seen = signal.generation
        let long = self.long
        let waiters = (0..<3).map { _ in
            Task {
                let start = ContinuousClock.now
                await signal.wait(after: seen, upTo: long)
                return ContinuousClock.now - start
            }
        }
        // Wait until all three are parked, so that the ring has continuations to resume.
        let deadline = ContinuousClock.now + prompt
        while signal.waiting < 3 && ContinuousClock.now < deadline { await Task.yield() }
        #expect(signal.waiting == 3)
        signal.ring()
        for waiter in waiters { #expect(await waiter.value < prompt) }
        #expect(signal.waiting == 0)
    }

    @Test func withoutARingTheWaitLastsItsTimeout() async {
        let signal = WorkSignal()
        let waited = await elapsed { await signal.wait(after: signal.generation, upTo: .milliseconds(100)) }
        #expect(waited >= .milliseconds(100))
        #expect(waited < prompt)
    }

    @Test func cancellingTheWaiterEndsTheWait() async {
        let signal = WorkSignal()
        let long = self.long
        let waiter = Task {
            let start = ContinuousClock.now
            await signal.wait(after: signal.generation, upTo: long)
            return ContinuousClock.now - start
        }
        let deadline = ContinuousClock.now + prompt
        while signal.waiting < 1 && ContinuousClock.now < deadline { await Task.yield() }
        waiter.cancel()
        #expect(await waiter.value < prompt)
        #expect(signal.waiting == 0)
        // A later ring still wakes a later waiter.
        let seen = signal.generation
        signal.ring()
        #expect(await elapsed { await signal.wait(after: seen, upTo: long) } < prompt)
    }
}
