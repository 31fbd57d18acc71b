import HeraldCore
import Hummingbird

/// A location group as the Pivotal API shows it, its locations in full.
struct LocationGroupView: ResponseEncodable, Equatable {
    var id: Int64
    var name: String
    var description: String
    var locations: [LocationView]
    var createdAt: Int64
    var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, name, description, locations
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    init(_ group: LocationGroup) {
        id = group.id
        name = group.name
        description = group.description
        locations = group.locations.map { LocationView($0, camelCaseTimes: true) }
        createdAt = group.createdAt
        updatedAt = group.updatedAt
    }
}
