import HeraldStore

extension BatchResult {
    /// Adds `other`'s outcomes to these.
    mutating func merge(_ other: BatchResult) {
        delivered += other.delivered
        expired += other.expired
        skipped += other.skipped
        failed.merge(other.failed, uniquingKeysWith: +)
        gone.merge(other.gone) { $1 }
        goneReasons.merge(other.goneReasons) { $1 }
        retries.merge(other.retries, uniquingKeysWith: +)
        released += other.released
        held.merge(other.held, uniquingKeysWith: +)
        lastError = other.lastError ?? lastError
    }

    /// The devices to retry, all instants together.
    var retryCount: Int { retries.values.reduce(0) { $0 + $1.count } }
}
