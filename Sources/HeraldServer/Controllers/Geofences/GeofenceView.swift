import HeraldCore
import Hummingbird

/// A geofence as the Pivotal API shows it, its locations in full.
struct GeofenceView: ResponseEncodable, Equatable {
    var id: Int64
    var platform: String
    var triggerType: String
    var startTime: Int64
    var expiryTime: Int64
    var tags: [String]
    var locations: [LocationView]
    var data: [String: JSONValue]
    var createdAt: Int64
    var updatedAt: Int64
    /// Device reports of the geofence triggering (only on `GET /v1/geofence/:id`).
    var triggered: Int?

    enum CodingKeys: String, CodingKey {
        case id, platform, tags, locations, data, triggered
        case triggerType = "trigger_type"
        case startTime = "start_time"
        case expiryTime = "expiry_time"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// - Parameter data: what to show as `data`; the geofence's own by default (a device gets
    ///   the keys its SDK reads).
    init(_ geofence: Geofence, data: [String: JSONValue]? = nil, triggered: Int? = nil) {
        id = geofence.id
        platform = geofence.definition.platform.rawValue
        triggerType = geofence.definition.triggerType.rawValue
        startTime = geofence.definition.startTime
        expiryTime = geofence.definition.expiryTime
        tags = geofence.definition.tags
        locations = geofence.locations.map { LocationView($0) }
        self.data = data ?? geofence.definition.data
        createdAt = geofence.createdAt
        updatedAt = geofence.updatedAt
        self.triggered = triggered
    }
}
