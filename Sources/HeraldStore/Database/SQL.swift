/// A statement with its bound values; interpolated values become placeholders, never text.
///
/// ```swift
/// let sql: SQL = "SELECT name FROM tenants WHERE id = \(id)"
/// ```
/// Placeholders are written `$1, $2, …` in order (PostgreSQL's form); the SQLite
/// backend rewrites them to `?1, ?2, …`.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public var text: String
    public var binds: [SQLValue]

    public init(unsafeText text: String, binds: [SQLValue] = []) {
        self.text = text
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        self.text = value
        self.binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        self.text = stringInterpolation.text
        self.binds = stringInterpolation.binds
    }

    public var description: String { text }

    /// Appends another statement fragment, renumbering its placeholders.
    public mutating func append(_ other: SQL) {
        // The text and binds move into the interpolation and back, so that appending a fragment
        // at a time (a batch's rows) grows them in place instead of copying them each time.
        var interpolation = StringInterpolation(literalCapacity: 0, interpolationCount: 0)
        swap(&interpolation.text, &text)
        swap(&interpolation.binds, &binds)
        interpolation.appendInterpolation(other)
        swap(&interpolation.text, &text)
        swap(&interpolation.binds, &binds)
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        var binds: [SQLValue] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Binds a value.
        public mutating func appendInterpolation(_ value: some SQLBindable) {
            binds.append(value.sqlValue)
            text += "$\(binds.count)"
        }

        /// Binds each value, comma-separated: `IN (\(list: ids))`.
        public mutating func appendInterpolation(list values: [some SQLBindable]) {
            for (index, value) in values.enumerated() {
                if index > 0 { text += ", " }
                appendInterpolation(value)
            }
        }

        /// Inserts a fragment with its own binds, renumbered.
        public mutating func appendInterpolation(_ fragment: SQL) {
            let offset = binds.count
            guard offset > 0, !fragment.binds.isEmpty else {
                text += fragment.text
                binds.append(contentsOf: fragment.binds)
                return
            }
            let source = Array(fragment.text.utf8)
            var out: [UInt8] = []
            out.reserveCapacity(source.count + fragment.binds.count * 2)
            var index = 0
            while index < source.count {
                let byte = source[index]
                if byte == UInt8(ascii: "$") {
                    var end = index + 1
                    var number = 0
                    while end < source.count, source[end] >= UInt8(ascii: "0"), source[end] <= UInt8(ascii: "9") {
                        number = number * 10 + Int(source[end] - UInt8(ascii: "0"))
                        end += 1
                    }
                    if end > index + 1 {
                        out.append(UInt8(ascii: "$"))
                        out.append(contentsOf: String(number + offset).utf8)
                        index = end
                        continue
                    }
                }
                out.append(byte)
                index += 1
            }
            text += String(decoding: out, as: UTF8.self)
            binds.append(contentsOf: fragment.binds)
        }

        /// Inserts trusted text as is (identifiers, keywords chosen by code, never user input).
        public mutating func appendInterpolation(unsafeRaw raw: String) {
            text += raw
        }
    }
}
