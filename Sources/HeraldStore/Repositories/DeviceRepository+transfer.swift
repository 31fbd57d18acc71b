import HeraldCore
import struct Foundation.UUID

/// A device as an export writes it: the row, its tags and its time zone.
public struct ExportedDevice: Sendable, Equatable {
    public var device: Device
    public var timeZone: String?
}

/// What became of one device of an import.
public enum DeviceImportOutcome: Sendable, Equatable {
    /// A device this application did not have, created with its uuid.
    case imported
    /// The application's device with this uuid, overwritten with the line's values.
    case updated
    /// Not written, for the reason given (nothing of it was).
    case rejected(ValidationError)
}

extension DeviceRepository {
    // MARK: Export

    /// The application's devices after internal id `after` (0 for the first page), in id order,
    /// at most `limit`, with their tags and time zones: a keyset page, so that an export of any
    /// size holds one page at a time and each page costs an index range scan.
    public func exportPage(applicationID: UUID, after: Int64, limit: Int) async throws -> [ExportedDevice] {
        let rows = try await database.query("""
            SELECT \(unsafeRaw: Self.columns), d.time_zone FROM devices d
            WHERE d.app_id = \(applicationID) AND d.id > \(after) ORDER BY d.id LIMIT \(limit)
            """)
        guard let last = rows.last else { return [] }
        var page = try rows.map { ExportedDevice(device: try Self.device($0), timeZone: try $0.optionalString("time_zone")) }
        // The page's tags in one range scan of the primary key (device_id, tag).
        let first = page[0].device.id
        let lastID = try last.int("id")
        var index = 0
        for row in try await database.query("""
            SELECT device_id, tag FROM device_tags
            WHERE device_id >= \(first) AND device_id <= \(lastID) AND app_id = \(applicationID) ORDER BY device_id, tag
            """)
        {
            let deviceID = try row.int("device_id")
            while index < page.count, page[index].device.id < deviceID { index += 1 }
            guard index < page.count, page[index].device.id == deviceID else { continue }
            page[index].device.tags.append(try row.string("tag"))
        }
        return page
    }

    // MARK: Import

    /// The most devices one upsert statement writes (16 bound values each).
    static let importStatementRows = 250

    /// Writes checked devices of `applicationID` with their uuids, in one transaction: a uuid
    /// this application has is overwritten (idempotent: the same lines again change nothing), a
    /// new one is created. A uuid another application holds (in any tenant), a uuid registered on
    /// another platform of this one, or a token another device of the platform holds is
    /// rejected, never moved. If the transaction fails, each device is written alone, so that
    /// one bad device costs only itself and none is left half-written.
    ///
    /// The outcomes come back in the order of `devices`. `devices` must not repeat a uuid.
    public func importDevices(_ devices: [DeviceImport], applicationID: UUID) async throws -> [DeviceImportOutcome] {
        guard !devices.isEmpty else { return [] }
        do {
            return try await database.transaction { connection in
                try await Self.importChunk(devices, applicationID: applicationID, on: connection)
            }
        } catch let error as StoreError where error.reason == .unavailable {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            guard devices.count > 1 else { return [.rejected(Self.importFailure(error))] }
            var outcomes: [DeviceImportOutcome] = []
            outcomes.reserveCapacity(devices.count)
            for device in devices {
                outcomes.append(contentsOf: try await importDevices([device], applicationID: applicationID))
            }
            return outcomes
        }
    }

    /// Why a device could not be written, for the report.
    static func importFailure(_ error: any Error) -> ValidationError {
        if let error = error as? StoreError, error.reason == .uniqueViolation {
            return ValidationError(
                code: "conflict", message: "another device of this platform took the token meanwhile", field: "registration_token")
        }
        return ValidationError(code: "not_written", message: "the device could not be written: \(error)")
    }

    static func importChunk(_ devices: [DeviceImport], applicationID: UUID, on connection: any SQLExecutor) async throws
        -> [DeviceImportOutcome]
    {
        // Who holds these uuids, and these tokens, now.
        var holders: [UUID: (id: Int64, applicationID: UUID, platformID: UUID)] = [:]
        for start in stride(from: 0, to: devices.count, by: 500) {
            let uuids = devices[start..<min(start + 500, devices.count)].map(\.uuid)
            for row in try await connection.query("SELECT id, uuid, app_id, platform_id FROM devices WHERE uuid IN (\(list: uuids))") {
                holders[try row.uuid("uuid")] = (try row.int("id"), try row.uuid("app_id"), try row.uuid("platform_id"))
            }
        }
        var tokensByPlatform: [UUID: [String]] = [:]
        for device in devices { tokensByPlatform[device.platform.id, default: []].append(device.registration.registrationToken ?? "") }
        var tokenHolders: [RegistrationBatcher.DeviceKey: UUID] = [:]
        for (platformID, tokens) in tokensByPlatform {
            for start in stride(from: 0, to: tokens.count, by: 500) {
                let slice = Array(tokens[start..<min(start + 500, tokens.count)])
                for row in try await connection.query(
                    "SELECT uuid, token FROM devices WHERE platform_id = \(platformID) AND token IN (\(list: slice))")
                {
                    tokenHolders[.init(platformID: platformID, token: try row.string("token"))] = try row.uuid("uuid")
                }
            }
        }

        // Each device: rejected, or written (new or over its own row).
        var outcomes: [DeviceImportOutcome] = []
        outcomes.reserveCapacity(devices.count)
        var accepted: [DeviceImport] = []
        var existing: [Int64] = []
        var tokensInChunk: [RegistrationBatcher.DeviceKey: UUID] = [:]
        for device in devices {
            let key = RegistrationBatcher.DeviceKey(platformID: device.platform.id, token: device.registration.registrationToken ?? "")
            if let holder = holders[device.uuid] {
                guard holder.applicationID == applicationID else {
                    outcomes.append(.rejected(ValidationError(
                        code: "conflict", message: "this device_uuid belongs to another application; it is not moved",
                        field: "device_uuid")))
                    continue
                }
                guard holder.platformID == device.platform.id else {
                    outcomes.append(.rejected(ValidationError(
                        code: "conflict",
                        message: "this device is registered on platform \(holder.platformID.lowercasedString) of this application; it is not moved",
                        field: "platform_uuid")))
                    continue
                }
            }
            if let other = tokenHolders[key] ?? tokensInChunk[key], other != device.uuid {
                outcomes.append(.rejected(ValidationError(
                    code: "conflict", message: "device \(other.lowercasedString) of this platform holds this token",
                    field: "registration_token")))
                continue
            }
            tokensInChunk[key] = device.uuid
            if let holder = holders[device.uuid] {
                existing.append(holder.id)
                outcomes.append(.updated)
            } else {
                outcomes.append(.imported)
            }
            accepted.append(device)
        }
        guard !accepted.isEmpty else { return outcomes }

        // The devices, upserted on their uuid (application and platform were checked above).
        var ids: [UUID: Int64] = [:]
        ids.reserveCapacity(accepted.count)
        for start in stride(from: 0, to: accepted.count, by: importStatementRows) {
            var insert: SQL = """
                INSERT INTO devices (uuid, app_id, platform_id, platform_type, token, os, os_version, device_alias, device_model,
                    device_manufacturer, custom_user_id, time_zone, active, created_at, updated_at) VALUES
                """
            for (index, device) in accepted[start..<min(start + importStatementRows, accepted.count)].enumerated() {
                let registration = device.registration
                insert.append("""
                    \(unsafeRaw: index == 0 ? "" : ",") (\(device.uuid), \(applicationID), \(device.platform.id),
                    \(device.platform.type.rawValue), \(registration.registrationToken ?? ""),
                    \(registration.os ?? Self.defaultOS(device.platform.type)), \(registration.osVersion.applied(to: nil)),
                    \(registration.deviceAlias.applied(to: nil)), \(registration.deviceModel.applied(to: nil)),
                    \(registration.deviceManufacturer.applied(to: nil)), \(registration.customUserID.applied(to: nil)),
                    \(registration.timeZone.applied(to: nil)), \(device.active ? 1 : 0), \(device.createdAt), \(device.updatedAt))
                    """)
            }
            insert.append("""
                 ON CONFLICT (uuid) DO UPDATE SET
                    token = excluded.token, os = excluded.os, os_version = excluded.os_version, device_alias = excluded.device_alias,
                    device_model = excluded.device_model, device_manufacturer = excluded.device_manufacturer,
                    custom_user_id = excluded.custom_user_id, time_zone = excluded.time_zone, active = excluded.active,
                    created_at = excluded.created_at, updated_at = excluded.updated_at
                RETURNING id, uuid
                """)
            for row in try await connection.query(insert) { ids[try row.uuid("uuid")] = try row.int("id") }
        }

        // Their tags: the line's list replaces what an existing device had.
        for start in stride(from: 0, to: existing.count, by: 500) {
            try await connection.query(
                "DELETE FROM device_tags WHERE device_id IN (\(list: Array(existing[start..<min(start + 500, existing.count)])))")
        }
        var tagRows: [(Int64, String)] = []
        for device in accepted {
            guard let id = ids[device.uuid] else {
                throw StoreError(reason: .unknown("upsert"), message: "the device upsert returned no row for \(device.uuid.lowercasedString)")
            }
            for tag in device.tags { tagRows.append((id, tag)) }
        }
        if !tagRows.isEmpty {
            let time = accepted.map(\.updatedAt).max() ?? 0
            try await TopicRepository.ensure(connection, tagRows.map { (applicationID, $0.1) }, time: time)
        }
        for start in stride(from: 0, to: tagRows.count, by: 300) {
            var tags: SQL = "INSERT INTO device_tags (device_id, app_id, tag) VALUES "
            for (index, row) in tagRows[start..<min(start + 300, tagRows.count)].enumerated() {
                tags.append("\(unsafeRaw: index == 0 ? "" : ", ")(\(row.0), \(applicationID), \(row.1))")
            }
            tags.append(" ON CONFLICT (device_id, tag) DO NOTHING")
            try await connection.query(tags)
        }
        return outcomes
    }

    /// Refreshes the planner's statistics of the device tables after a large import, so that
    /// the next fan-out is not planned on the empty tables' figures (PostgreSQL; SQLite's
    /// `ANALYZE` likewise feeds its query planner).
    public func refreshStatistics() async throws {
        try await database.query("ANALYZE devices")
        try await database.query("ANALYZE device_tags")
        try await database.query("ANALYZE topics")
    }
}
