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
        } else {
            self.text = try container.decode(JSONValue.self).jsonText
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
