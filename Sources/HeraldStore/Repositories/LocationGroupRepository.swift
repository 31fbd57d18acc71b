import HeraldCore

import struct Foundation.UUID

/// An application's location groups and their members.
package struct LocationGroupRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock

    static let columns = "g.id, g.app_id, g.name, g.description, g.created_at, g.updated_at"

    /// Creates a group; every location must belong to the application.
    package func create(applicationID: UUID, _ changes: LocationGroupChanges) async throws -> LocationGroup {
        guard let name = changes.name else {
            throw ValidationError(code: "missing_field", message: "name is required", field: "name")
        }
        let time = clock.now.epochMilliseconds
        let id = try await database.transaction { connection -> Int64 in
            let ids = changes.locationIDs ?? []
            try await LocationRepository.requireExisting(connection, ids: ids, applicationID: applicationID, field: "location_ids")
            let rows = try await connection.query(
                """
                INSERT INTO location_groups (app_id, name, description, created_at, updated_at)
                VALUES (\(applicationID), \(name), \(changes.description ?? ""), \(time), \(time))
                RETURNING id
                """)
            let id = try rows.first?.int("id") ?? 0
            try await Self.insertMembers(connection, groupID: id, locationIDs: ids)
            return id
        }
        guard let group = try await find(id: id, applicationID: applicationID) else {
            throw StoreError(reason: .unknown("location group"), message: "location group \(id) vanished after its creation")
        }
        return group
    }

    /// The group with its locations, if it belongs to `applicationID`.
    package func find(id: Int64, applicationID: UUID) async throws -> LocationGroup? {
        let rows = try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM location_groups g WHERE g.id = \(id) AND g.app_id = \(applicationID)")
        guard let row = rows.first else { return nil }
        return try await Self.withLocations([row], database).first
    }

    /// One page of the application's groups in id order, with the total that match.
    ///
    /// - Parameters:
    ///   - query: text the name or description contains (case-insensitive).
    ///   - changedSince: only those created or changed after this time (epoch ms).
    package func list(
        applicationID: UUID, query: String? = nil, changedSince: Int64? = nil, page: Int, size: Int
    ) async throws -> (groups: [LocationGroup], total: Int) {
        var condition: SQL = "g.app_id = \(applicationID)"
        if let query, !query.isEmpty {
            let pattern = "%" + DeviceRepository.escapeLike(query.lowercased()) + "%"
            condition.append(" AND (lower(g.name) LIKE \(pattern) ESCAPE '\\' OR lower(g.description) LIKE \(pattern) ESCAPE '\\')")
        }
        if let changedSince {
            condition.append(" AND g.updated_at > \(changedSince)")
        }
        let total = try await database.query("SELECT COUNT(*) AS n FROM location_groups g WHERE \(condition)").first?.int("n") ?? 0
        guard size > 0 else { return ([], Int(total)) }
        let offset = max(0, page - 1) * size
        let rows = try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM location_groups g WHERE \(condition) ORDER BY g.id LIMIT \(size) OFFSET \(offset)")
        return (try await Self.withLocations(rows, database), Int(total))
    }

    /// Updates the fields given; `locationIDs` replaces the members.
    package func update(id: Int64, applicationID: UUID, _ changes: LocationGroupChanges) async throws -> LocationGroup? {
        let time = clock.now.epochMilliseconds
        let found = try await database.transaction { connection -> Bool in
            // Locked: the fields not given are written back as read, and the members replaced.
            let rows = try await connection.query(
                """
                SELECT \(unsafeRaw: Self.columns) FROM location_groups g WHERE g.id = \(id) AND g.app_id = \(applicationID)\(
                    connection.dialect.rowLock(.noKeyUpdate))
                """)
            guard let row = rows.first else { return false }
            if let ids = changes.locationIDs {
                try await LocationRepository.requireExisting(connection, ids: ids, applicationID: applicationID, field: "location_ids")
                try await connection.query("DELETE FROM location_group_members WHERE group_id = \(id)")
                try await Self.insertMembers(connection, groupID: id, locationIDs: ids)
            }
            let name = try changes.name ?? row.string("name")
            let description = try changes.description ?? row.string("description")
            try await connection.query(
                """
                UPDATE location_groups SET name = \(name), description = \(description), updated_at = \(time)
                WHERE id = \(id)
                """)
            return true
        }
        return found ? try await find(id: id, applicationID: applicationID) : nil
    }

    /// Deletes the group (not its locations); false if the application has no such group.
    package func delete(id: Int64, applicationID: UUID) async throws -> Bool {
        try await database.transaction { connection in
            try await !connection.query(
                "DELETE FROM location_groups WHERE id = \(id) AND app_id = \(applicationID) RETURNING id"
            ).isEmpty
        }
    }

    // MARK: Helpers

    static func insertMembers(_ connection: any SQLExecutor, groupID: Int64, locationIDs: [Int64]) async throws {
        guard !locationIDs.isEmpty else { return }
        var sql: SQL = "INSERT INTO location_group_members (group_id, location_id, position) VALUES "
        for (position, locationID) in locationIDs.enumerated() {
            sql.append(position == 0 ? "(\(groupID), \(locationID), \(position))" : ", (\(groupID), \(locationID), \(position))")
        }
        try await connection.query(sql)
    }

    /// Groups from their rows, with their locations (one query for all of them).
    static func withLocations(_ rows: [SQLRow], _ connection: any SQLExecutor) async throws -> [LocationGroup] {
        var groups = try rows.map { row in
            LocationGroup(
                id: try row.int("id"), applicationID: try row.uuid("app_id"), name: try row.string("name"),
                description: try row.string("description"), locations: [], createdAt: try row.int("created_at"),
                updatedAt: try row.int("updated_at"))
        }
        guard !groups.isEmpty else { return [] }
        var byGroup: [Int64: [Location]] = [:]
        for row in try await connection.query(
            """
            SELECT m.group_id, \(unsafeRaw: LocationRepository.columns)
            FROM location_group_members m JOIN locations l ON l.id = m.location_id
            WHERE m.group_id IN (\(list: groups.map(\.id)))
            ORDER BY m.group_id, m.position
            """)
        {
            byGroup[try row.int("group_id"), default: []].append(try LocationRepository.location(row))
        }
        for index in groups.indices { groups[index].locations = byGroup[groups[index].id] ?? [] }
        return groups
    }
}
