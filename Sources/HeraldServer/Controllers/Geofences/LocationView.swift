import HeraldCore
import Hummingbird

/// A location as the Pivotal API shows it: `lat` and `long` as strings, `rad` a number.
struct LocationView: ResponseEncodable, Equatable {
    var id: Int64
    var name: String
    var lat: String
    var long: String
    var rad: JSONValue
    var createdAt: Int64
    var updatedAt: Int64
    /// The Pivotal API shows a location group's locations with camel-case times; Herald shows both.
    var camelCaseTimes: Bool

    init(_ location: Location, camelCaseTimes: Bool = false) {
        id = location.id
        name = location.name
        lat = Self.coordinate(location.latitude)
        long = Self.coordinate(location.longitude)
        rad = Self.number(location.radius)
        createdAt = location.createdAt
        updatedAt = location.updatedAt
        self.camelCaseTimes = camelCaseTimes
    }

    enum CodingKeys: String, CodingKey {
        case id, name, lat, long, rad
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case camelCreatedAt = "createdAt"
        case camelUpdatedAt = "updatedAt"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(lat, forKey: .lat)
        try container.encode(long, forKey: .long)
        try container.encode(rad, forKey: .rad)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        if camelCaseTimes {
            try container.encode(createdAt, forKey: .camelCreatedAt)
            try container.encode(updatedAt, forKey: .camelUpdatedAt)
        }
    }

    /// Degrees as decimal text (`"49.2827"`, `"0.0"`), never in exponent form.
    static func coordinate(_ value: Double) -> String {
        let text = "\(value)"
        guard text.contains("e") else { return text }
        // Tiny values print as 1e-05; write them out to ten places (a hundred micrometres).
        var digits = String(Int64((abs(value) * 10_000_000_000).rounded()))
        while digits.count < 11 { digits = "0" + digits }
        var fraction = String(digits.suffix(10))
        while fraction.count > 1 && fraction.hasSuffix("0") { fraction.removeLast() }
        return (value < 0 ? "-" : "") + String(digits.dropLast(10)) + "." + fraction
    }

    /// A whole number as an integer, otherwise as a fraction.
    static func number(_ value: Double) -> JSONValue {
        value == value.rounded() && abs(value) < 1e15 ? .int(Int64(value)) : .double(value)
    }
}
