import Synchronization

/// A clock the test moves by hand, in epoch seconds.
final class ManualClock: Sendable {
    private let seconds: Mutex<Int64>

    init(_ start: Int64 = 1_800_000_000) {
        seconds = Mutex(start)
    }

    var now: Int64 { seconds.withLock { $0 } }

    func advance(by delta: Int64) {
        seconds.withLock { $0 += delta }
    }

    var function: @Sendable () -> Int64 { { self.now } }
}
