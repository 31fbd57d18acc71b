import HeraldCore

import struct Foundation.UUID

/// One result row, with typed accessors by column name.
package struct SQLRow: Sendable {
    package let columns: [String]
    package let values: [SQLValue]

    package init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    package subscript(_ column: String) -> SQLValue {
        guard let index = columns.firstIndex(of: column) else { return .null }
        return values[index]
    }

    package func int(_ column: String) throws -> Int64 {
        switch self[column] {
        case .int(let value): return value
        case .double(let value): return Int64(value)
        case .text(let text): if let value = Int64(text) { return value }
        case .null, .blob, .integers: break
        }
        throw StoreError.decoding(column: column, expected: "integer")
    }

    package func optionalInt(_ column: String) throws -> Int64? {
        if case .null = self[column] { return nil }
        return try int(column)
    }

    package func double(_ column: String) throws -> Double {
        switch self[column] {
        case .double(let value): return value
        case .int(let value): return Double(value)
        case .text(let text): if let value = Double(text) { return value }
        case .null, .blob, .integers: break
        }
        throw StoreError.decoding(column: column, expected: "number")
    }

    package func string(_ column: String) throws -> String {
        guard case .text(let value) = self[column] else { throw StoreError.decoding(column: column, expected: "text") }
        return value
    }

    package func optionalString(_ column: String) throws -> String? {
        switch self[column] {
        case .null: return nil
        case .text(let value): return value
        default: throw StoreError.decoding(column: column, expected: "text")
        }
    }

    package func bool(_ column: String) throws -> Bool {
        try int(column) != 0
    }

    package func uuid(_ column: String) throws -> UUID {
        guard let value = UUID(text: try string(column)) else {
            throw StoreError.decoding(column: column, expected: "uuid")
        }
        return value
    }

    package func blob(_ column: String) throws -> [UInt8] {
        guard case .blob(let value) = self[column] else { throw StoreError.decoding(column: column, expected: "blob") }
        return value
    }

    package func optionalBlob(_ column: String) throws -> [UInt8]? {
        if case .null = self[column] { return nil }
        return try blob(column)
    }
}
