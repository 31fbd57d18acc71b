import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// An application's geofence locations (`/v1/locations` and the dashboard's Locations page).
/// Moving or renaming one schedules the update push for the live geofences that use it.
struct Locations: GeofencePlaces {
    let store: Store
    let updates: GeofenceUpdatePolicy

    typealias Input = LocationInput

    static var noun: String { "location" }
    static var listKey: String { "locations" }
    static var totalKey: String { "totalLocations" }

    func list(applicationID: UUID, query: GeofencePageQuery) async throws -> (places: [Location], total: Int) {
        let (locations, total) = try await store.locations.list(
            applicationID: applicationID, query: query.query, changedSince: query.changedSince, page: query.page, size: query.size)
        return (locations, total)
    }

    func create(applicationID: UUID, _ changes: LocationChanges) async throws -> Location {
        try await store.locations.create(applicationID: applicationID, changes)
    }

    func find(id: Int64, applicationID: UUID) async throws -> Location? {
        try await store.locations.find(id: id, applicationID: applicationID)
    }

    func update(id: Int64, applicationID: UUID, _ changes: LocationChanges) async throws -> Location? {
        try await store.locations.update(id: id, applicationID: applicationID, changes, notify: updates)
    }

    /// A location that a geofence which has not expired uses may not go (409 `location_in_use`).
    func delete(id: Int64, applicationID: UUID) async throws {
        switch try await store.locations.delete(id: id, applicationID: applicationID) {
        case .deleted:
            return
        case .notFound:
            throw APIError.notFound(Self.noun)
        case .inUse(let geofenceIDs):
            let list = geofenceIDs.map(String.init).joined(separator: ", ")
            throw APIError(
                .conflict, code: "location_in_use",
                message: "location \(id) is used by geofences that have not expired (\(list)); change or delete them first")
        }
    }

    static func view(_ place: Location) -> LocationView { LocationView(place) }
}
