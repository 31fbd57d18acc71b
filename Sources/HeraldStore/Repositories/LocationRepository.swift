import HeraldCore

import struct Foundation.UUID

/// What came of deleting a location.
package enum LocationDeletion: Sendable, Equatable {
    case deleted
    case notFound
    /// Refused: geofences that have not expired use it.
    case inUse(geofenceIDs: [Int64])
}

/// An application's locations.
package struct LocationRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock
    /// Announced after a change that may have queued or moved a geofence-update push.
    let work: WorkSignals

    static let columns = "l.id, l.app_id, l.name, l.latitude, l.longitude, l.radius, l.created_at, l.updated_at"

    /// Creates a location from validated fields (all of them set).
    package func create(applicationID: UUID, _ changes: LocationChanges) async throws -> Location {
        guard let name = changes.name, let latitude = changes.latitude, let longitude = changes.longitude,
            let radius = changes.radius
        else {
            throw ValidationError(code: "missing_field", message: "name, lat, long and rad are required")
        }
        let time = clock.now.epochMilliseconds
        let rows = try await database.query(
            """
            INSERT INTO locations (app_id, name, latitude, longitude, radius, created_at, updated_at)
            VALUES (\(applicationID), \(name), \(latitude), \(longitude), \(radius), \(time), \(time))
            RETURNING id
            """)
        let id = try rows.first?.int("id") ?? 0
        return Location(
            id: id, applicationID: applicationID, name: name, latitude: latitude, longitude: longitude, radius: radius,
            createdAt: time, updatedAt: time)
    }

    /// The location, if it belongs to `applicationID`.
    package func find(id: Int64, applicationID: UUID) async throws -> Location? {
        try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM locations l WHERE l.id = \(id) AND l.app_id = \(applicationID)"
        ).first.map(Self.location)
    }

    /// One page of the application's locations in id order, with the total that match.
    ///
    /// - Parameters:
    ///   - query: text the name contains (case-insensitive).
    ///   - changedSince: only those created or changed after this time (epoch ms).
    package func list(
        applicationID: UUID, query: String? = nil, changedSince: Int64? = nil, page: Int, size: Int
    ) async throws -> (locations: [Location], total: Int) {
        var condition: SQL = "l.app_id = \(applicationID)"
        if let query, !query.isEmpty {
            condition.append(" AND lower(l.name) LIKE \("%" + DeviceRepository.escapeLike(query.lowercased()) + "%") ESCAPE '\\'")
        }
        if let changedSince {
            condition.append(" AND l.updated_at > \(changedSince)")
        }
        let total = try await database.query("SELECT COUNT(*) AS n FROM locations l WHERE \(condition)").first?.int("n") ?? 0
        guard size > 0 else { return ([], Int(total)) }
        let offset = max(0, page - 1) * size
        let locations = try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM locations l WHERE \(condition) ORDER BY l.id LIMIT \(size) OFFSET \(offset)"
        ).map(Self.location)
        return (locations, Int(total))
    }

    /// Updates the fields given. A location that moves (or is renamed) changes the geofences that
    /// use it: they are marked changed, so that devices fetch them again, and their devices are
    /// told through `notify`'s geofence-update push.
    package func update(
        id: Int64, applicationID: UUID, _ changes: LocationChanges, notify policy: GeofenceUpdatePolicy
    ) async throws -> Location? {
        let time = clock.now.epochMilliseconds
        let location = try await database.transaction { connection -> Location? in
            // Locked: the fields not given are written back as read (docs/ARCHITECTURE.md,
            // "Concurrency on PostgreSQL").
            let rows = try await connection.query(
                "SELECT \(unsafeRaw: Self.columns) FROM locations l WHERE l.id = \(id) AND l.app_id = \(applicationID)\(connection.dialect.rowLock(.noKeyUpdate))"
            )
            guard let stored = try rows.first.map(Self.location) else { return nil }
            guard changes.movesCircle(of: stored) else { return stored }
            var location = changes.applied(to: stored)
            location.updatedAt = time
            try await connection.query(
                """
                UPDATE locations SET name = \(location.name), latitude = \(location.latitude), longitude = \(location.longitude),
                    radius = \(location.radius), updated_at = \(time)
                WHERE id = \(id)
                """)
            let users = try await GeofenceRepository.definitions(
                connection, applicationID: applicationID,
                where: """
                    g.deleted_at IS NULL AND g.expiry_time > \(time)
                    AND g.id IN (SELECT geofence_id FROM geofence_locations WHERE location_id = \(id))
                    """)
            if !users.isEmpty {
                try await connection.query("UPDATE geofences SET updated_at = \(time) WHERE id IN (\(list: users.map(\.id)))")
                var audience = GeofenceAudience(users[0].definition)
                for user in users.dropFirst() { audience = audience.union(GeofenceAudience(user.definition)) }
                try await GeofenceUpdateScheduler.schedule(
                    connection, applicationID: applicationID, audience: audience, now: time, policy: policy)
            }
            return location
        }
        await work.announce(.deliveryJobs)
        return location
    }

    /// Deletes the location, unless a geofence that has not expired uses it (those that expired
    /// lose it, as do location groups).
    package func delete(id: Int64, applicationID: UUID) async throws -> LocationDeletion {
        let time = clock.now.epochMilliseconds
        return try await database.transaction { connection in
            // Locked first: a geofence taking the location meanwhile (its foreign key, or
            // `existing`, holds the row in share mode) is waited for and then seen below, and one
            // taking it later waits for this delete, rather than the delete's cascade removing
            // the location from a live geofence.
            let rows = try await connection.query(
                "SELECT id FROM locations WHERE id = \(id) AND app_id = \(applicationID)\(connection.dialect.rowLock(.update))")
            guard !rows.isEmpty else { return .notFound }
            let users = try await connection.query(
                """
                SELECT g.id FROM geofences g JOIN geofence_locations gl ON gl.geofence_id = g.id
                WHERE gl.location_id = \(id) AND g.deleted_at IS NULL AND g.expiry_time > \(time)
                ORDER BY g.id
                """
            ).map { try $0.int("id") }
            guard users.isEmpty else { return .inUse(geofenceIDs: users) }
            try await connection.query("DELETE FROM locations WHERE id = \(id)")
            return .deleted
        }
    }

    /// The locations with `ids` that belong to `applicationID`, by id, each kept from deletion
    /// until the transaction ends (PostgreSQL): the caller is about to reference them, and a
    /// delete in progress is waited for (its location then missing, not a foreign-key failure).
    static func existing(_ connection: any SQLExecutor, ids: [Int64], applicationID: UUID) async throws -> [Int64: Location] {
        guard !ids.isEmpty else { return [:] }
        var found: [Int64: Location] = [:]
        for row in try await connection.query(
            "SELECT \(unsafeRaw: columns) FROM locations l WHERE l.app_id = \(applicationID) AND l.id IN (\(list: ids))\(connection.dialect.rowLock(.keyShare))"
        ) {
            let location = try location(row)
            found[location.id] = location
        }
        return found
    }

    /// Checks that every id names a location of the application, naming the first that does not.
    static func requireExisting(
        _ connection: any SQLExecutor, ids: [Int64], applicationID: UUID, field: String
    ) async throws {
        let found = try await existing(connection, ids: ids, applicationID: applicationID)
        if let index = ids.firstIndex(where: { found[$0] == nil }) {
            throw ValidationError(
                code: "unknown_location", message: "location \(ids[index]) does not exist in this application",
                field: "\(field)[\(index)]")
        }
    }

    static func location(_ row: SQLRow) throws -> Location {
        Location(
            id: try row.int("id"), applicationID: try row.uuid("app_id"), name: try row.string("name"),
            latitude: try row.double("latitude"), longitude: try row.double("longitude"), radius: try row.double("radius"),
            createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
    }
}
