/// The width of a bucket of the analytics time series.
package enum AnalyticsInterval: String, Sendable, Equatable, CaseIterable {
    case hour
    case day

    /// The width in milliseconds.
    package var milliseconds: Int64 {
        switch self {
        case .hour: 3_600_000
        case .day: 86_400_000
        }
    }

    /// The start of the bucket holding `time` (UTC; epoch ms).
    package func bucketStart(_ time: Int64) -> Int64 {
        let width = milliseconds
        return time >= 0 ? time / width * width : (time - width + 1) / width * width
    }
}
