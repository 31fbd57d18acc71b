import struct Foundation.Data
import class Foundation.JSONSerialization
import class Foundation.NSNull

/// A JSON value received either as an embedded object or as a string holding JSON,
/// kept as its text (so a service-account file may be pasted either way).
public struct JSONText: Sendable, Equatable, Codable {
    public var text: String

    public init(_ text: String) {
        self.text = text
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self.text = string
            return
        }
        let value = try container.decode(AnyJSON.self)
        let data = try JSONSerialization.data(withJSONObject: value.object, options: [.sortedKeys])
        self.text = String(decoding: data, as: UTF8.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// Any JSON value, decoded into Foundation objects.
struct AnyJSON: Decodable {
    let object: Any

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var items: [Any] = []
            while !array.isAtEnd { items.append(try array.decode(AnyJSON.self).object) }
            object = items
        } else if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var dict: [String: Any] = [:]
            for key in keyed.allKeys { dict[key.stringValue] = try keyed.decode(AnyJSON.self, forKey: key).object }
            object = dict
        } else {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() { object = NSNullValue.null }
            else if let bool = try? single.decode(Bool.self) { object = bool }
            else if let int = try? single.decode(Int64.self) { object = int }
            else if let double = try? single.decode(Double.self) { object = double }
            else { object = try single.decode(String.self) }
        }
    }
}

enum NSNullValue {
    static var null: Any { NSNull() }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { self.stringValue = String(intValue); self.intValue = intValue }
}
