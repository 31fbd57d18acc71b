#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The wall clock as a Swift `Clock`: instants are `Duration`s since the Unix epoch, so the same
/// clock serves the state machines (which only compare and add durations) and the places that
/// must write wall time down (a JWT's `iat`, an HTTP date).
///
/// Production code takes `EpochClock.system`; tests inject one that reads a time they move by
/// hand (`TestClock.epochClock` in HeraldTestSupport).
package struct EpochClock: Clock, Sendable {
    /// A point in wall time: how long after 1970-01-01T00:00:00Z.
    package struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// Since the Unix epoch.
        package var sinceEpoch: Duration

        package init(sinceEpoch: Duration) {
            self.sinceEpoch = sinceEpoch
        }

        /// Whole seconds since the epoch (rounded down), as JWTs and HTTP dates count.
        package var epochSeconds: Int64 { sinceEpoch.components.seconds }

        package func advanced(by duration: Duration) -> Instant { Instant(sinceEpoch: sinceEpoch + duration) }
        package func duration(to other: Instant) -> Duration { other.sinceEpoch - sinceEpoch }
        package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceEpoch < rhs.sinceEpoch }
        package var description: String { "\(sinceEpoch) since the epoch" }
    }

    private let read: @Sendable () -> Duration

    /// A clock that reads the time since the epoch from `read` (a test's hand-moved time).
    package init(_ read: @escaping @Sendable () -> Duration) {
        self.read = read
    }

    /// The system's real-time clock.
    package static var system: EpochClock {
        EpochClock {
            var spec = timespec()
            clock_gettime(CLOCK_REALTIME, &spec)
            return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
        }
    }

    package var now: Instant { Instant(sinceEpoch: read()) }

    package var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleeps for as long as this clock says is left until `deadline`.
    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await Task.sleep(for: max(.zero, now.duration(to: deadline)), tolerance: tolerance)
    }
}
