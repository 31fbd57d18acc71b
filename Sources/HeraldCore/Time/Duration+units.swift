/// A `Duration` in the units it leaves memory in: the one place each conversion is written.
extension Duration {
    /// Whole milliseconds (rounded toward zero): the unit the store writes times and delays in.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Whole nanoseconds (saturating): the unit swift-metrics timers record.
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }

    /// Seconds as a floating-point number: the unit swift-metrics gauges take.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

extension EpochClock.Instant {
    /// The instant `milliseconds` after the Unix epoch, as the store writes times.
    package init(epochMilliseconds milliseconds: Int64) {
        self.init(sinceEpoch: .milliseconds(milliseconds))
    }

    /// Whole milliseconds since the epoch: the instant as the store writes it.
    package var epochMilliseconds: Int64 { sinceEpoch.milliseconds }
}
