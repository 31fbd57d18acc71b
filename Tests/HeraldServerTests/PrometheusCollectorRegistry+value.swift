import Prometheus

extension PrometheusCollectorRegistry {
    /// The value of the sample `series` (`name{label="value",…}` exactly as exposed), 0 when absent.
    func value(_ series: String) -> Double {
        Self.value(series, in: emitToString())
    }

    /// The value of `series` in a Prometheus text exposition, 0 when absent.
    static func value(_ series: String, in exposition: String) -> Double {
        for line in exposition.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1)) ?? .nan
        }
        return 0
    }
}
