import HeraldCore
import struct Foundation.UUID

/// One result row, with typed accessors by column name.
public struct SQLRow: Sendable {
    public let columns: [String]
    public let values: [SQLValue]

    public init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    public subscript(_ column: String) -> SQLValue {
        guard let index = columns.firstIndex(of: column) else { return .null }
        return values[index]
    }

    public func int(_ column: String) throws -> Int64 {
        switch self[column] {
        case .int(let value): return value
        case .double(let value): return Int64(value)
        case .text(let text): if let value = Int64(text) { return value }
        case .null, .blob, .integers: break
        }
        throw StoreError.decoding(column: column, expected: "integer")
    }

    public func optionalInt(_ column: String) throws -> Int64? {
        if case .null = self[column] { return nil }
        return try int(column)
    }

    public func double(_ column: String) throws -> Double {
        switch self[column] {
        case .double(let value): return value
        case .int(let value): return Double(value)
        case .text(let text): if let value = Double(text) { return value }
        case .null, .blob, .integers: break
        }
        throw StoreError.decoding(column: column, expected: "number")
    }

    public func string(_ column: String) throws -> String {
        guard case .text(let value) = self[column] else { throw StoreError.decoding(column: column, expected: "text") }
        return value
    }

    public func optionalString(_ column: String) throws -> String? {
        switch self[column] {
        case .null: return nil
        case .text(let value): return value
        default: throw StoreError.decoding(column: column, expected: "text")
        }
    }

    public func bool(_ column: String) throws -> Bool {
        try int(column) != 0
    }

    public func uuid(_ column: String) throws -> UUID {
        guard let value = UUID(text: try string(column)) else {
            throw StoreError.decoding(column: column, expected: "uuid")
        }
        return value
    }

    public func blob(_ column: String) throws -> [UInt8] {
        guard case .blob(let value) = self[column] else { throw StoreError.decoding(column: column, expected: "blob") }
        return value
    }

    public func optionalBlob(_ column: String) throws -> [UInt8]? {
        if case .null = self[column] { return nil }
        return try blob(column)
    }
}
