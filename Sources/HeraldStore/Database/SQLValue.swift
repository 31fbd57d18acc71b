import HeraldCore

import struct Foundation.UUID

/// A value bound to or read from a statement, in the few types both backends share.
///
/// Booleans are stored as 0/1 integers and times as epoch milliseconds, so that one
/// schema means the same on SQLite and PostgreSQL.
package enum SQLValue: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case blob([UInt8])
    /// A list of integers bound as one value (never read back): a PostgreSQL `bigint[]`, on
    /// SQLite a JSON array for `json_each`. A batch's device ids travel so, however many.
    case integers([Int64])
}

/// A Swift value that can be bound to a statement.
package protocol SQLBindable: Sendable {
    var sqlValue: SQLValue { get }
}

extension Int64: SQLBindable {
    package var sqlValue: SQLValue { .int(self) }
}

extension Int: SQLBindable {
    package var sqlValue: SQLValue { .int(Int64(self)) }
}

extension Double: SQLBindable {
    package var sqlValue: SQLValue { .double(self) }
}

extension String: SQLBindable {
    package var sqlValue: SQLValue { .text(self) }
}

extension Bool: SQLBindable {
    package var sqlValue: SQLValue { .int(self ? 1 : 0) }
}

extension UUID: SQLBindable {
    /// UUIDs are stored as lower-case text.
    package var sqlValue: SQLValue { .text(lowercasedString) }
}

extension Array: SQLBindable where Element == UInt8 {
    package var sqlValue: SQLValue { .blob(self) }
}

extension Optional: SQLBindable where Wrapped: SQLBindable {
    package var sqlValue: SQLValue {
        switch self {
        case .none: .null
        case .some(let value): value.sqlValue
        }
    }
}

extension SQLValue: SQLBindable {
    package var sqlValue: SQLValue { self }
}
