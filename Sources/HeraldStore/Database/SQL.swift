/// A statement with its bound values; interpolated values become placeholders, never text.
///
/// ```swift
/// let sql: SQL = "SELECT name FROM tenants WHERE id = \(id)"
/// ```
/// A statement holds its literal text and, beside it, where each placeholder goes: binds are
/// positional (the n-th placeholder is the n-th bind). The backend writes the placeholders in
/// its own form when it runs the statement (`text(for:)`: `$1, $2, …` for PostgreSQL,
/// `?1, ?2, …` for SQLite), so nothing scans or rewrites statement text, and fragments join
/// without renumbering.
package struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement's text without its placeholders.
    private(set) var literal: String
    /// Where each placeholder goes: an offset in `literal`'s UTF-8, one per bind, ascending.
    private(set) var placeholders: [Int]
    /// The bound values, in the order of their placeholders.
    public private(set) var binds: [SQLValue]

    /// Trusted text without placeholders (schema statements, names chosen by code).
    package init(unsafeText text: String) {
        self.literal = text
        self.placeholders = []
        self.binds = []
    }

    package init(stringLiteral value: String) {
        self.init(unsafeText: value)
    }

    package init(stringInterpolation: StringInterpolation) {
        self.literal = stringInterpolation.literal
        self.placeholders = stringInterpolation.placeholders
        self.binds = stringInterpolation.binds
    }

    /// The statement in PostgreSQL's form.
    package var description: String { text(for: .postgres) }

    /// Whether the statement is a query that only reads (a `SELECT`).
    var isSelect: Bool {
        var head = literal.utf8.drop(while: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") }).prefix(6).makeIterator()
        for expected in "SELECT".utf8 {
            guard let byte = head.next(), byte & 0xDF == expected else { return false }
        }
        return true
    }

    /// The statement's text with placeholders as `dialect` writes them.
    package func text(for dialect: SQLDialect) -> String {
        if placeholders.isEmpty { return literal }
        let marker = dialect == .postgres ? UInt8(ascii: "$") : UInt8(ascii: "?")
        var source = literal
        return source.withUTF8 { bytes in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + placeholders.count * 5)
            var start = 0
            for (number, offset) in placeholders.enumerated() {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<offset]))
                out.append(marker)
                Self.appendDecimal(number + 1, to: &out)
                start = offset
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
            return String(decoding: out, as: UTF8.self)
        }
    }

    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        var divisor = 1
        while divisor * 10 <= value { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Appends another statement fragment with its binds.
    package mutating func append(_ other: SQL) {
        let base = literal.utf8.count
        literal += other.literal
        for offset in other.placeholders { placeholders.append(base + offset) }
        binds.append(contentsOf: other.binds)
    }

    package struct StringInterpolation: StringInterpolationProtocol {
        var literal = ""
        var placeholders: [Int] = []
        var binds: [SQLValue] = []

        package init(literalCapacity: Int, interpolationCount: Int) {
            literal.reserveCapacity(literalCapacity)
            placeholders.reserveCapacity(interpolationCount)
            binds.reserveCapacity(interpolationCount)
        }

        package mutating func appendLiteral(_ literal: String) {
            self.literal += literal
        }

        /// Binds a value.
        package mutating func appendInterpolation(_ value: some SQLBindable) {
            placeholders.append(literal.utf8.count)
            binds.append(value.sqlValue)
        }

        /// Binds each value, comma-separated: `IN (\(list: ids))`.
        package mutating func appendInterpolation(list values: [some SQLBindable]) {
            for (index, value) in values.enumerated() {
                if index > 0 { literal += ", " }
                appendInterpolation(value)
            }
        }

        /// Inserts a fragment with its own binds.
        package mutating func appendInterpolation(_ fragment: SQL) {
            let base = literal.utf8.count
            literal += fragment.literal
            for offset in fragment.placeholders { placeholders.append(base + offset) }
            binds.append(contentsOf: fragment.binds)
        }

        /// Inserts trusted text as is (identifiers, keywords chosen by code, never user input).
        package mutating func appendInterpolation(unsafeRaw raw: String) {
            literal += raw
        }
    }
}
