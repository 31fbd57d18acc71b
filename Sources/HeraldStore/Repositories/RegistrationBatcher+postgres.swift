import HeraldCore
import NIOCore
import PostgresNIO

extension RegistrationBatcher {
    /// PostgreSQL: writes the batch in a single statement, hence a single round trip and an
    /// implicit transaction (no BEGIN, no COMMIT to wait for). Data-modifying CTEs upsert the
    /// devices, create the topics that are new, drop the tags re-registered devices no longer
    /// have and insert the batch's tags.
    ///
    /// The batch travels as two JSON parameters (its devices, its subscriptions), so that the
    /// statement's text never changes (it is prepared once per connection) and PostgreSQL binds
    /// four values whatever the batch's size, instead of fourteen per device and two per tag.
    ///
    /// Returns nil, having written nothing, when a tag names an expired topic: its old
    /// subscriptions must go first, which the transactional path does.
    static func writeInOneStatement(_ batch: [Request], on database: PostgresStoreDatabase) async throws -> [Device]? {
        var deviceJSON = ByteBufferAllocator().buffer(capacity: batch.count * 400)
        var subscriptionJSON = ByteBufferAllocator().buffer(capacity: 64)
        deviceJSON.writeInteger(UInt8(ascii: "["))
        subscriptionJSON.writeInteger(UInt8(ascii: "["))
        for (position, request) in batch.enumerated() {
            let registration = request.registration
            var device = JSONWriter(capacity: 400)
            device.field("position", Int64(position))
            device.field("uuid", request.candidate.lowercasedString)
            device.field("app_id", request.platform.applicationID.lowercasedString)
            device.field("platform_id", request.platform.id.lowercasedString)
            device.field("platform_type", request.platform.type.rawValue)
            device.field("token", request.token)
            device.field("os", registration.os ?? DeviceRepository.defaultOS(request.platform.type))
            device.field("os_version", registration.osVersion.applied(to: nil))
            device.field("device_alias", registration.deviceAlias.applied(to: nil))
            device.field("device_model", registration.deviceModel.applied(to: nil))
            device.field("device_manufacturer", registration.deviceManufacturer.applied(to: nil))
            device.field("custom_user_id", registration.customUserID.applied(to: nil))
            device.field("time_zone", registration.timeZone.applied(to: nil))
            device.field("time", request.time)
            if position > 0 { deviceJSON.writeInteger(UInt8(ascii: ",")) }
            var object = device.finish()
            deviceJSON.writeBuffer(&object)
            for tag in request.tags {
                if subscriptionJSON.readableBytes > 1 { subscriptionJSON.writeInteger(UInt8(ascii: ",")) }
                subscriptionJSON.writeString("[\(position),")
                JSONWriter.string(tag, into: &subscriptionJSON)
                subscriptionJSON.writeInteger(UInt8(ascii: "]"))
            }
        }
        deviceJSON.writeInteger(UInt8(ascii: "]"))
        subscriptionJSON.writeInteger(UInt8(ascii: "]"))
        let time = batch.map(\.time).max() ?? 0
        let statement = Self.oneStatement(
            devices: String(buffer: deviceJSON), subscriptions: String(buffer: subscriptionJSON), time: time)
        let rows = try await database.execute(prepared: PreparedBatch(binds: statement.binds))
        if rows.isEmpty { return nil }
        return try devices(for: batch, from: rows)
    }

    /// The statement: `devices` is a JSON array of objects named as `input`'s columns,
    /// `subscriptions` one of `[position, tag]` pairs. `blocked` (a tag names an expired topic)
    /// makes every writing part write nothing.
    fileprivate static func oneStatement(devices: String, subscriptions: String, time: Int64) -> SQL {
        """
        WITH input AS (
            SELECT * FROM json_to_recordset(\(devices)::json) AS x(position bigint, uuid text, app_id text, platform_id text,
                platform_type text, token text, os text, os_version text, device_alias text, device_model text,
                device_manufacturer text, custom_user_id text, time_zone text, time bigint)
        ), subscriptions AS (
            SELECT (pair->>0)::bigint AS position, pair->>1 AS tag FROM json_array_elements(\(subscriptions)::json) AS pair
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
            RETURNING \(unsafeRaw: DeviceRepository.unqualifiedColumns)
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
        """
    }
}

/// `RegistrationBatcher.oneStatement`, prepared once per connection.
private struct PreparedBatch: PostgresPreparedStatement {
    static let name = "herald_registration_batch"
    static let sql = RegistrationBatcher.oneStatement(devices: "", subscriptions: "", time: 0).text
    typealias Row = PostgresRow

    let binds: [SQLValue]

    func makeBindings() throws -> PostgresBindings { PostgresStoreDatabase.bindings(binds) }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
