import HeraldCore
import Synchronization

/// A clock in epoch seconds that tests move by hand, for the token state machines and clients
/// that take `now` in seconds (`TestClock` is the one in milliseconds); `epochClock` is the same
/// time as the `Clock` the access-token code takes.
public final class ManualClock: Sendable {
    private let seconds: Mutex<Int64>

    public init(_ start: Int64 = 1_800_000_000) {
        seconds = Mutex(start)
    }

    public var now: Int64 { seconds.withLock { $0 } }

    public func advance(by delta: Int64) {
        seconds.withLock { $0 += delta }
    }

    /// The clock as the closure the code under test takes.
    public var function: @Sendable () -> Int64 { { self.now } }

    /// The clock as an `EpochClock`, reading the same seconds.
    public var epochClock: EpochClock { EpochClock { .seconds(self.now) } }
}
