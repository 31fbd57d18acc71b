import HeraldCore
import Synchronization

/// The wall clock of a test, set and moved by hand: the one test clock. It reads in the unit
/// the code under test takes: epoch milliseconds (`now`) for stores and services, epoch seconds
/// (`epochSeconds`, `secondsClosure`) for the mocks and the VAPID and Web Push clients, and
/// `epochClock`, the same time as the `Clock` the delivery workers and access tokens take.
public final class TestClock: Sendable {
    private let value: Mutex<Int64>

    /// - Parameter start: epoch milliseconds.
    public init(_ start: Int64 = 1_800_000_000_000) {
        value = Mutex(start)
    }

    /// A clock starting at `epochSeconds`.
    public convenience init(epochSeconds: Int64) {
        self.init(epochSeconds * 1000)
    }

    /// Epoch milliseconds.
    public var now: Int64 { value.withLock { $0 } }

    /// Whole epoch seconds (rounded down), as JWTs and HTTP dates count.
    public var epochSeconds: Int64 { EpochClock.Instant(epochMilliseconds: now).epochSeconds }

    public func advance(_ milliseconds: Int64) {
        value.withLock { $0 += milliseconds }
    }

    public func advance(by duration: Duration) {
        advance(duration.milliseconds)
    }

    public func set(_ milliseconds: Int64) {
        value.withLock { $0 = milliseconds }
    }

    /// The clock as the epoch-seconds closure the mocks and the Web Push clients take.
    public var secondsClosure: @Sendable () -> Int64 { { self.epochSeconds } }

    /// The clock as an `EpochClock`, reading the same milliseconds.
    public var epochClock: EpochClock { EpochClock { .milliseconds(self.now) } }
}
