import HeraldCore

import struct Foundation.Data
import class Foundation.JSONDecoder
import struct Foundation.UUID

/// What a device fetches with `GET /v1/geofences`.
package struct GeofenceSyncResult: Sendable, Equatable {
    /// Geofences the device should monitor that are new or changed since its timestamp (all of
    /// them for a first fetch).
    package var geofences: [Geofence]
    /// Geofences the device must stop monitoring: deleted, expired, or no longer for it.
    package var deletedIDs: [Int64]
    /// The timestamp for the device's next fetch (epoch ms).
    package var lastModified: Int64

    package init(geofences: [Geofence], deletedIDs: [Int64], lastModified: Int64) {
        self.geofences = geofences
        self.deletedIDs = deletedIDs
        self.lastModified = lastModified
    }
}

/// An application's geofences, their tombstones, and what devices fetch of them.
///
/// A deleted geofence stays as a tombstone (`deleted_at`), so that a device fetching changes
/// since an earlier time learns to drop it. Every change schedules the application's
/// geofence-update push in the same transaction (`GeofenceUpdateScheduler`).
package struct GeofenceRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock
    /// Announced after a change that may have queued or moved a geofence-update push.
    let work: WorkSignals

    /// How far before the clock the `lastModified` of a fetch is set (ms): a change whose
    /// transaction began before the fetch but committed after it is still after the device's next
    /// timestamp. Devices may get a change twice; they never miss one.
    package static let syncOverlap: Int64 = 5_000

    static let columns = "g.id, g.app_id, g.platform, g.trigger_type, g.start_time, g.expiry_time, g.data, g.created_at, g.updated_at"

    // MARK: Managing

    /// Creates a geofence from validated fields; its locations must belong to the application.
    package func create(applicationID: UUID, _ changes: GeofenceChanges, notify policy: GeofenceUpdatePolicy) async throws -> Geofence {
        let time = clock.now.epochMilliseconds
        let definition = try changes.definition(now: time)
        let id = try await database.transaction { connection -> Int64 in
            try await LocationRepository.requireExisting(
                connection, ids: definition.locationIDs, applicationID: applicationID, field: "locations")
            let rows = try await connection.query(
                """
                INSERT INTO geofences (app_id, platform, trigger_type, start_time, expiry_time, data, created_at, updated_at)
                VALUES (\(applicationID), \(definition.platform.rawValue), \(definition.triggerType.rawValue), \(definition.startTime),
                    \(definition.expiryTime), \(JSONValue.object(definition.data).jsonText), \(time), \(time))
                RETURNING id
                """)
            let id = try rows.first?.int("id") ?? 0
            try await Self.insertParts(connection, id: id, definition)
            try await GeofenceUpdateScheduler.schedule(
                connection, applicationID: applicationID, audience: GeofenceAudience(definition), startsAt: definition.startTime,
                now: time, policy: policy)
            return id
        }
        await work.announce(.deliveryJobs)
        guard let geofence = try await find(id: id, applicationID: applicationID) else {
            throw StoreError(reason: .unknown("geofence"), message: "geofence \(id) vanished after its creation")
        }
        return geofence
    }

    /// The geofence, if it belongs to `applicationID` and is not deleted.
    package func find(id: Int64, applicationID: UUID) async throws -> Geofence? {
        try await Self.load(
            database, "g.id = \(id) AND g.app_id = \(applicationID) AND g.deleted_at IS NULL"
        ).first
    }

    /// One page of the application's geofences (deleted ones left out) in id order, with the total.
    ///
    /// - Parameter changedSince: only those created or changed after this time (epoch ms).
    package func list(
        applicationID: UUID, changedSince: Int64? = nil, page: Int, size: Int
    ) async throws -> (geofences: [Geofence], total: Int) {
        var condition: SQL = "g.app_id = \(applicationID) AND g.deleted_at IS NULL"
        if let changedSince {
            condition.append(" AND g.updated_at > \(changedSince)")
        }
        let total = try await database.query("SELECT COUNT(*) AS n FROM geofences g WHERE \(condition)").first?.int("n") ?? 0
        guard size > 0 else { return ([], Int(total)) }
        let offset = max(0, page - 1) * size
        condition.append(" ORDER BY g.id LIMIT \(size) OFFSET \(offset)")
        return (try await Self.load(database, condition), Int(total))
    }

    /// Applies an update; nil if the application has no such geofence.
    package func update(
        id: Int64, applicationID: UUID, _ changes: GeofenceChanges, notify policy: GeofenceUpdatePolicy
    ) async throws -> Geofence? {
        let time = clock.now.epochMilliseconds
        let found = try await database.transaction { connection -> Bool in
            // Locked: what the change does not name is written back as read.
            guard
                let stored = try await Self.load(
                    connection,
                    "g.id = \(id) AND g.app_id = \(applicationID) AND g.deleted_at IS NULL\(connection.dialect.rowLock(.noKeyUpdate))"
                ).first
            else { return false }
            let old = stored.definition
            let new = try changes.applied(to: old, now: time)
            // Nothing changed: devices need not fetch it again.
            if new == old { return true }
            if new.locationIDs != old.locationIDs {
                try await LocationRepository.requireExisting(
                    connection, ids: new.locationIDs, applicationID: applicationID, field: "locations")
            }
            try await connection.query(
                """
                UPDATE geofences SET platform = \(new.platform.rawValue), trigger_type = \(new.triggerType.rawValue),
                    start_time = \(new.startTime), expiry_time = \(new.expiryTime), data = \(JSONValue.object(new.data).jsonText),
                    updated_at = \(time)
                WHERE id = \(id)
                """)
            try await connection.query("DELETE FROM geofence_tags WHERE geofence_id = \(id)")
            try await connection.query("DELETE FROM geofence_locations WHERE geofence_id = \(id)")
            try await Self.insertParts(connection, id: id, new)

            // Devices that had it (its old audience) and those that get it (the new one).
            let wasLive = old.startTime <= time && old.expiryTime > time
            let isLive = new.startTime <= time && new.expiryTime > time
            if wasLive || isLive {
                try await GeofenceUpdateScheduler.schedule(
                    connection, applicationID: applicationID, audience: GeofenceAudience(old).union(GeofenceAudience(new)),
                    now: time, policy: policy)
            }
            if new.startTime > time {
                try await GeofenceUpdateScheduler.schedule(
                    connection, applicationID: applicationID, audience: GeofenceAudience(new), startsAt: new.startTime, now: time,
                    policy: policy)
            }
            return true
        }
        await work.announce(.deliveryJobs)
        return found ? try await find(id: id, applicationID: applicationID) : nil
    }

    /// Deletes the geofence, keeping its tombstone; false if the application has no such geofence.
    package func delete(id: Int64, applicationID: UUID, notify policy: GeofenceUpdatePolicy) async throws -> Bool {
        let time = clock.now.epochMilliseconds
        let deleted = try await database.transaction { connection in
            // Locked: a concurrent update would otherwise write the tags and locations back.
            guard
                let stored = try await Self.load(
                    connection,
                    "g.id = \(id) AND g.app_id = \(applicationID) AND g.deleted_at IS NULL\(connection.dialect.rowLock(.noKeyUpdate))"
                ).first
            else { return false }
            try await connection.query("UPDATE geofences SET deleted_at = \(time), updated_at = \(time) WHERE id = \(id)")
            try await connection.query("DELETE FROM geofence_locations WHERE geofence_id = \(id)")
            try await connection.query("DELETE FROM geofence_tags WHERE geofence_id = \(id)")
            let definition = stored.definition
            if definition.startTime <= time && definition.expiryTime > time {
                try await GeofenceUpdateScheduler.schedule(
                    connection, applicationID: applicationID, audience: GeofenceAudience(definition), now: time, policy: policy)
            }
            return true
        }
        await work.announce(.deliveryJobs)
        return deleted
    }

    // MARK: Device sync

    /// What `device` should fetch, given the `lastModified` of its previous fetch (`since`; 0 for
    /// a first fetch, after which the SDKs replace everything they monitor).
    ///
    /// A geofence is the device's when it is not deleted, has started and not expired, is for the
    /// device's platform, and has no tags or one the device is subscribed to. A fetch since a time
    /// answers those that became the device's since (changed, or started), and lists as deleted
    /// those the device may hold that are no longer its own: deleted, expired, or changed away
    /// from it. A device whose registration changed since (its tags, perhaps) gets all of its
    /// geofences again, and every one of its platform it may hold and must not.
    package func sync(device: Device, since: Int64) async throws -> GeofenceSyncResult {
        let time = clock.now.epochMilliseconds
        let lastModified = max(since, time - Self.syncOverlap, 0)
        guard device.platformType == .ios || device.platformType == .android else {
            return GeofenceSyncResult(geofences: [], deletedIDs: [], lastModified: lastModified)
        }
        let platforms = [device.platformType.rawValue, GeofencePlatform.all.rawValue]
        let visible: SQL = """
            g.platform IN (\(list: platforms)) AND g.start_time <= \(time) AND g.expiry_time > \(time)
            AND (NOT EXISTS (SELECT 1 FROM geofence_tags t WHERE t.geofence_id = g.id)
                OR EXISTS (SELECT 1 FROM geofence_tags t JOIN device_tags d ON d.tag = t.tag
                    WHERE t.geofence_id = g.id AND d.device_id = \(device.id)))
            """
        let first = since <= 0
        let deviceChanged = !first && device.updatedAt > since

        var current: SQL = "g.app_id = \(device.applicationID) AND g.deleted_at IS NULL AND \(visible)"
        if !first && !deviceChanged {
            current.append(" AND (g.updated_at > \(since) OR g.start_time > \(since))")
        }
        current.append(" ORDER BY g.id")
        let geofences = try await Self.load(database, current)

        var deleted: [Int64] = []
        if !first {
            deleted = try await database.query(
                "SELECT id FROM geofences WHERE app_id = \(device.applicationID) AND deleted_at > \(since)"
            ).map { try $0.int("id") }
            var gone: SQL = """
                SELECT g.id FROM geofences g
                WHERE g.app_id = \(device.applicationID) AND g.deleted_at IS NULL AND NOT (\(visible))
                AND (g.updated_at > \(since) OR (g.expiry_time > \(since) AND g.expiry_time <= \(time))
                """
            if deviceChanged {
                gone.append(" OR (g.platform IN (\(list: platforms)) AND g.expiry_time > \(since))")
            }
            gone.append(")")
            deleted += try await database.query(gone).map { try $0.int("id") }
            deleted.sort()
        }
        return GeofenceSyncResult(geofences: geofences, deletedIDs: deleted, lastModified: lastModified)
    }

    // MARK: Helpers

    static func insertParts(_ connection: any SQLExecutor, id: Int64, _ definition: GeofenceDefinition) async throws {
        if !definition.locationIDs.isEmpty {
            var sql: SQL = "INSERT INTO geofence_locations (geofence_id, location_id, position) VALUES "
            for (position, locationID) in definition.locationIDs.enumerated() {
                sql.append(position == 0 ? "(\(id), \(locationID), \(position))" : ", (\(id), \(locationID), \(position))")
            }
            try await connection.query(sql)
        }
        if !definition.tags.isEmpty {
            for start in stride(from: 0, to: definition.tags.count, by: 256) {
                var sql: SQL = "INSERT INTO geofence_tags (geofence_id, tag) VALUES "
                for (index, tag) in definition.tags[start..<min(start + 256, definition.tags.count)].enumerated() {
                    sql.append(index == 0 ? "(\(id), \(tag))" : ", (\(id), \(tag))")
                }
                try await connection.query(sql)
            }
        }
    }

    /// The geofences matching `condition` (on `geofences g`, which may end with an ORDER BY),
    /// with their tags and locations.
    static func load(_ connection: any SQLExecutor, _ condition: SQL) async throws -> [Geofence] {
        let rows = try await connection.query("SELECT \(unsafeRaw: columns) FROM geofences g WHERE \(condition)")
        guard !rows.isEmpty else { return [] }
        var geofences: [Geofence] = []
        geofences.reserveCapacity(rows.count)
        for row in rows {
            guard let platform = GeofencePlatform(rawValue: try row.string("platform")),
                let trigger = GeofenceTrigger(rawValue: try row.string("trigger_type"))
            else {
                throw StoreError.decoding(column: "platform", expected: "a geofence platform and trigger type")
            }
            let data = try JSONDecoder().decode([String: JSONValue].self, from: Data(try row.string("data").utf8))
            let definition = GeofenceDefinition(
                platform: platform, triggerType: trigger, startTime: try row.int("start_time"), expiryTime: try row.int("expiry_time"),
                data: data, tags: [], locationIDs: [])
            geofences.append(
                Geofence(
                    id: try row.int("id"), applicationID: try row.uuid("app_id"), definition: definition, locations: [],
                    createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at")))
        }
        var index: [Int64: Int] = [:]
        for (position, geofence) in geofences.enumerated() { index[geofence.id] = position }
        let ids = geofences.map(\.id)
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = Array(ids[start..<min(start + 500, ids.count)])
            for row in try await connection.query(
                "SELECT geofence_id, tag FROM geofence_tags WHERE geofence_id IN (\(list: chunk)) ORDER BY geofence_id, tag")
            {
                if let position = index[try row.int("geofence_id")] {
                    geofences[position].definition.tags.append(try row.string("tag"))
                }
            }
            for row in try await connection.query(
                """
                SELECT gl.geofence_id, \(unsafeRaw: LocationRepository.columns)
                FROM geofence_locations gl JOIN locations l ON l.id = gl.location_id
                WHERE gl.geofence_id IN (\(list: chunk))
                ORDER BY gl.geofence_id, gl.position
                """)
            {
                if let position = index[try row.int("geofence_id")] {
                    let location = try LocationRepository.location(row)
                    geofences[position].locations.append(location)
                    geofences[position].definition.locationIDs.append(location.id)
                }
            }
        }
        return geofences
    }

    /// The definitions of the geofences matching `condition`, for scheduling update pushes.
    static func definitions(
        _ connection: any SQLExecutor, applicationID: UUID, where condition: SQL
    ) async throws -> [(id: Int64, definition: GeofenceDefinition)] {
        try await load(connection, "g.app_id = \(applicationID) AND \(condition)").map { ($0.id, $0.definition) }
    }
}
