import HeraldCore
import Synchronization

/// A clock in epoch milliseconds that tests set and move by hand, for stores and services that
/// take `now`; `epochClock` is the same time as the `Clock` the delivery workers take.
public final class TestClock: Sendable {
    private let value: Mutex<Int64>

    public init(_ start: Int64 = 1_800_000_000_000) {
        value = Mutex(start)
    }

    public var now: Int64 { value.withLock { $0 } }

    public func advance(_ milliseconds: Int64) {
        value.withLock { $0 += milliseconds }
    }

    public func set(_ milliseconds: Int64) {
        value.withLock { $0 = milliseconds }
    }

    /// The clock as an `EpochClock`, reading the same milliseconds.
    public var epochClock: EpochClock { EpochClock { .milliseconds(self.now) } }
}
