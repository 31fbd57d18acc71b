import HeraldCore
import HeraldStore
import Hummingbird

import struct Foundation.UUID

/// Named sets of an application's locations (`/v1/location_groups` and the dashboard's Locations page).
struct LocationGroups: GeofencePlaces {
    let store: Store

    typealias Input = LocationGroupInput

    static var noun: String { "location group" }
    static var listKey: String { "location_groups" }
    static var totalKey: String { "totalLocationGroups" }

    func list(applicationID: UUID, query: GeofencePageQuery) async throws -> (places: [LocationGroup], total: Int) {
        let (groups, total) = try await store.locationGroups.list(
            applicationID: applicationID, query: query.query, changedSince: query.changedSince, page: query.page, size: query.size)
        return (groups, total)
    }

    func create(applicationID: UUID, _ changes: LocationGroupChanges) async throws -> LocationGroup {
        try await store.locationGroups.create(applicationID: applicationID, changes)
    }

    func find(id: Int64, applicationID: UUID) async throws -> LocationGroup? {
        try await store.locationGroups.find(id: id, applicationID: applicationID)
    }

    func update(id: Int64, applicationID: UUID, _ changes: LocationGroupChanges) async throws -> LocationGroup? {
        try await store.locationGroups.update(id: id, applicationID: applicationID, changes)
    }

    func delete(id: Int64, applicationID: UUID) async throws {
        guard try await store.locationGroups.delete(id: id, applicationID: applicationID) else { throw APIError.notFound(Self.noun) }
    }

    static func view(_ place: LocationGroup) -> LocationGroupView { LocationGroupView(place) }
}
