/// A JSON value received either as an embedded object or as a string holding JSON,
/// kept as its text (so a service-account file may be pasted either way).
package struct JSONText: Sendable, Equatable, Codable {
    package var text: String

    package init(_ text: String) {
        self.text = text
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self.text = string
        } else {
            self.text = try container.decode(JSONValue.self).jsonText
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
