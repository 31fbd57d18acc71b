/// A failure of the store, with the reason callers may act on.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    /// Why the store failed.
    package enum Reason: Sendable, Equatable {
        /// A unique constraint refused a duplicate.
        case uniqueViolation
        /// A row still referenced elsewhere, or a reference to a missing row.
        case foreignKeyViolation
        /// A column did not hold what the code expected.
        case decoding
        /// The database was unreachable or the connection broke.
        case unavailable
        /// The schema is newer than this build knows.
        case schemaTooNew
        /// A delivery job's lease ran out and another worker claimed it: this worker's results
        /// were not recorded.
        case leaseLost
        /// Anything else the driver said.
        case unknown(String)
    }

    package var reason: Reason
    package var message: String

    package init(reason: Reason, message: String) {
        self.reason = reason
        self.message = message
    }

    package var description: String { "store error (\(reason)): \(message)" }

    static func decoding(column: String, expected: String) -> StoreError {
        StoreError(reason: .decoding, message: "column \(column) is not \(expected)")
    }
}
