import HeraldCore
import Hummingbird

import struct Foundation.UUID

/// One kind of an application's geofence places (`Locations`, `LocationGroups`): the operations
/// its `/v1/…` API (`GeofencePlacesController`) and the dashboard share, so both follow one path.
///
/// Each operation takes the application the caller was allowed (the app credentials' app, or one
/// the admin scope let through); a place of another application is simply not found.
protocol GeofencePlaces: Sendable {
    /// What a create or change sends (`validated(requireAll:)` checks it).
    associatedtype Input: GeofencePlaceInput
    associatedtype Place: Sendable
    associatedtype View: ResponseEncodable & Sendable

    /// The kind in a message: "location", "location group".
    static var noun: String { get }
    /// The listing's members: the places, and their total.
    static var listKey: String { get }
    static var totalKey: String { get }

    func list(applicationID: UUID, query: GeofencePageQuery) async throws -> (places: [Place], total: Int)
    func create(applicationID: UUID, _ changes: Input.Changes) async throws -> Place
    func find(id: Int64, applicationID: UUID) async throws -> Place?
    func update(id: Int64, applicationID: UUID, _ changes: Input.Changes) async throws -> Place?
    /// Deletes the place; throws not found, or a conflict when it may not go.
    func delete(id: Int64, applicationID: UUID) async throws
    static func view(_ place: Place) -> View
}

/// What a geofence place's create or change sends.
protocol GeofencePlaceInput: Decodable, Sendable {
    associatedtype Changes: Sendable
    func validated(requireAll: Bool) throws(ValidationError) -> Changes
}

extension LocationInput: GeofencePlaceInput {}
extension LocationGroupInput: GeofencePlaceInput {}

extension GeofencePlaces {
    /// Checks `input` (every field, for a create) and creates the place.
    func create(applicationID: UUID, _ input: Input) async throws -> Place {
        try await create(applicationID: applicationID, try input.validated(requireAll: true))
    }

    /// Checks the fields `input` gives and changes them; not found when there is no such place.
    func update(id: Int64, applicationID: UUID, _ input: Input) async throws -> Place {
        guard let place = try await update(id: id, applicationID: applicationID, try input.validated(requireAll: false)) else {
            throw APIError.notFound(Self.noun)
        }
        return place
    }

    /// The place; not found when the application has none with this id.
    func place(id: Int64, applicationID: UUID) async throws -> Place {
        guard let place = try await find(id: id, applicationID: applicationID) else { throw APIError.notFound(Self.noun) }
        return place
    }
}
