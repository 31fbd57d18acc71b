import HeraldCore

extension RegistrationBatcher {
    /// The most tag subscriptions one statement carries (two bound values each); a batch with
    /// more is written the general way.
    static let maximumStatementTags = 10_000

    /// PostgreSQL: writes the batch in a single statement, hence a single round trip and an
    /// implicit transaction (no BEGIN, no COMMIT to wait for). Data-modifying CTEs upsert the
    /// devices, create the topics that are new, drop the tags re-registered devices no longer
    /// have and insert the batch's tags.
    ///
    /// Returns nil, having written nothing, when the general path is needed: a tag names an
    /// expired topic (whose old subscriptions must go first, in their own statements), or
    /// the batch carries more tags than one statement should bind.
    static func writeInOneStatement(_ batch: [Request], on database: any SQLDatabase) async throws -> [Device]? {
        let tagCount = batch.reduce(0) { $0 + $1.tags.count }
        guard tagCount <= maximumStatementTags else { return nil }
        let time = batch.map(\.time).max() ?? 0

        var statement: SQL = """
            WITH input (position, uuid, app_id, platform_id, platform_type, token, os, os_version, device_alias, device_model,
                device_manufacturer, custom_user_id, time_zone, time) AS (VALUES
            """
        for (position, request) in batch.enumerated() {
            let registration = request.registration
            let os = registration.os ?? DeviceRepository.defaultOS(request.platform.type)
            statement.append("""
                \(unsafeRaw: position == 0 ? "" : ",") (\(position), \(request.candidate), \(request.platform.applicationID),
                \(request.platform.id), \(request.platform.type.rawValue), \(request.token), \(os),
                \(registration.osVersion.applied(to: nil)), \(registration.deviceAlias.applied(to: nil)),
                \(registration.deviceModel.applied(to: nil)), \(registration.deviceManufacturer.applied(to: nil)),
                \(registration.customUserID.applied(to: nil)), \(registration.timeZone.applied(to: nil)), \(request.time))
                """)
        }
        statement.append("), subscriptions (position, tag) AS (")
        if tagCount == 0 {
            statement.append("SELECT NULL::bigint, NULL::text WHERE false")
        } else {
            statement.append("VALUES ")
            var first = true
            for (position, request) in batch.enumerated() {
                for tag in request.tags {
                    statement.append("\(unsafeRaw: first ? "" : ", ")(\(position), \(tag))")
                    first = false
                }
            }
        }
        // `blocked`: a tag names an expired topic. Every writing part checks it, so that the
        // statement then writes nothing and the caller takes the general path.
        statement.append("""
            ), blocked AS (
                SELECT 1 FROM subscriptions s JOIN input i ON i.position = s.position
                JOIN topics t ON t.app_id = i.app_id AND t.name = s.tag
                WHERE t.expires_at IS NOT NULL AND t.expires_at <= \(time) LIMIT 1
            ), up AS (
                INSERT INTO devices (uuid, app_id, platform_id, platform_type, token, os, os_version, device_alias, device_model,
                    device_manufacturer, custom_user_id, time_zone, active, created_at, updated_at)
                SELECT uuid, app_id, platform_id, platform_type, token, os, os_version, device_alias, device_model,
                    device_manufacturer, custom_user_id, time_zone, 1, time, time
                FROM input WHERE NOT EXISTS (SELECT 1 FROM blocked)
                ON CONFLICT (platform_id, token) DO UPDATE SET
                    os = excluded.os, os_version = excluded.os_version, device_alias = excluded.device_alias,
                    device_model = excluded.device_model, device_manufacturer = excluded.device_manufacturer,
                    custom_user_id = excluded.custom_user_id, time_zone = excluded.time_zone, active = 1,
                    updated_at = excluded.updated_at
                RETURNING \(unsafeRaw: DeviceRepository.columns.replacingOccurrences(of: "d.", with: ""))
            ), matched AS (
                SELECT i.position, i.uuid AS candidate, up.id, up.uuid, up.app_id
                FROM up JOIN input i ON i.platform_id = up.platform_id AND i.token = up.token
            ), new_topics AS (
                INSERT INTO topics (app_id, name, created_at)
                SELECT DISTINCT i.app_id, s.tag, \(time)::bigint FROM subscriptions s JOIN input i ON i.position = s.position
                WHERE NOT EXISTS (SELECT 1 FROM blocked)
                ORDER BY 1, 2
                ON CONFLICT (app_id, name) DO NOTHING
            ), cleared AS (
                DELETE FROM device_tags d USING matched m
                WHERE d.device_id = m.id AND m.uuid <> m.candidate
                    AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.position = m.position AND s.tag = d.tag)
            ), tagged AS (
                INSERT INTO device_tags (device_id, app_id, tag)
                SELECT m.id, m.app_id, s.tag FROM subscriptions s JOIN matched m ON m.position = s.position
                ON CONFLICT (device_id, tag) DO NOTHING
            )
            SELECT * FROM up
            """)
        let rows = try await database.query(statement)
        if rows.isEmpty { return nil }
        return try devices(for: batch, from: rows)
    }

    /// The upserted rows in the batch's order, each with the tags it was registered with.
    static func devices(for batch: [Request], from rows: [SQLRow]) throws -> [Device] {
        var byKey: [String: Device] = [:]
        for row in rows {
            let device = try DeviceRepository.device(row)
            byKey[device.platformID.uuidString + device.registrationToken] = device
        }
        var devices: [Device] = []
        devices.reserveCapacity(batch.count)
        for request in batch {
            guard var device = byKey[request.platform.id.uuidString + request.token] else {
                throw StoreError(reason: .unknown("upsert"), message: "the device upsert returned no row for a registration")
            }
            device.tags = request.tags.sorted()
            devices.append(device)
        }
        return devices
    }
}
