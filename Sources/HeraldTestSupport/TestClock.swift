import HeraldCore
import Synchronization

/// The wall clock of a test, set and moved by hand: the one test clock. Code under test takes it
/// as `epochClock`, the `EpochClock` every part of Herald is given (the store, the server, the
/// delivery workers, the provider clients and the mocks); tests read it back in the units their
/// assertions compare with: epoch milliseconds (`now`, as the store keeps times) and epoch
/// seconds (`epochSeconds`, as JWTs count).
package final class TestClock: Sendable {
    private let value: Mutex<Int64>

    /// - Parameter start: epoch milliseconds.
    package init(_ start: Int64 = 1_800_000_000_000) {
        value = Mutex(start)
    }

    /// A clock starting at `epochSeconds`.
    package convenience init(epochSeconds: Int64) {
        self.init(epochSeconds * 1000)
    }

    /// Epoch milliseconds.
    package var now: Int64 { value.withLock { $0 } }

    /// Whole epoch seconds (rounded down), as JWTs and HTTP dates count.
    package var epochSeconds: Int64 { EpochClock.Instant(epochMilliseconds: now).epochSeconds }

    package func advance(_ milliseconds: Int64) {
        value.withLock { $0 += milliseconds }
    }

    package func advance(by duration: Duration) {
        advance(duration.milliseconds)
    }

    package func set(_ milliseconds: Int64) {
        value.withLock { $0 = milliseconds }
    }

    /// The clock as an `EpochClock`, reading the same milliseconds.
    package var epochClock: EpochClock { EpochClock { .milliseconds(self.now) } }
}
