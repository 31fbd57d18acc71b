extension Duration {
    /// Whole milliseconds (rounded toward zero): the unit the store writes times and delays in.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension EpochClock.Instant {
    /// The instant `milliseconds` after the Unix epoch, as the store writes times.
    public init(epochMilliseconds milliseconds: Int64) {
        self.init(sinceEpoch: .milliseconds(milliseconds))
    }

    /// Whole milliseconds since the epoch: the instant as the store writes it.
    public var epochMilliseconds: Int64 { sinceEpoch.milliseconds }
}
