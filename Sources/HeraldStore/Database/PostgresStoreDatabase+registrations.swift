import NIOCore
import PostgresNIO

extension PostgresStoreDatabase {
    /// PostgreSQL: writes the batch in a single statement, hence a single round trip and an
    /// implicit transaction (no BEGIN, no COMMIT to wait for). Data-modifying CTEs upsert the
    /// devices, create the topics that are new, drop the tags re-registered devices no longer
    /// have and insert the batch's tags.
    ///
    /// The batch travels column by column, as arrays (`PreparedBatch`), so that the statement's
    /// text never changes (it is prepared once per connection) and PostgreSQL binds sixteen
    /// values whatever the batch's size, in its binary form: nothing to parse (it was JSON before,
    /// which cost both sides more).
    ///
    /// Returns each registration's position, id, uuid and created_at; nil, having written
    /// nothing, when a tag names an expired topic: its old subscriptions must go first, which the
    /// transactional path does.
    package func writeInOneStatement(_ batch: RegistrationBatch) async throws -> [SQLRow]? {
        let rows = try await execute(prepared: PreparedBatch(batch: batch))
        return rows.isEmpty ? nil : rows
    }
}

/// The registration batch's statement, prepared once per connection, and a batch's values for it.
private struct PreparedBatch: PostgresPreparedStatement {
    static let name = "herald_registration_batch"
    /// `$1…$13` are the devices' columns (a device's `position` is its row's ordinality, from 1),
    /// `$14` and `$15` the subscriptions (position, tag), `$16` the batch's time. `blocked` (a
    /// tag names an expired topic) makes every writing part write nothing.
    static let sql = """
        WITH input AS (
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[]) WITH ORDINALITY
                AS x(uuid, app_id, platform_id, platform_type, token, os, os_version, device_alias, device_model,
                    device_manufacturer, custom_user_id, time_zone, time, position)
        ), subscriptions AS (
            SELECT * FROM unnest($14::bigint[], $15::text[]) AS s(position, tag)
        ), blocked AS (
            SELECT 1 FROM subscriptions s JOIN input i ON i.position = s.position
            JOIN topics t ON t.app_id = i.app_id AND t.name = s.tag
            WHERE t.expires_at IS NOT NULL AND t.expires_at <= $16 LIMIT 1
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
            RETURNING id, uuid, app_id, platform_id, token, created_at
        ), matched AS (
            SELECT i.position, i.uuid AS candidate, up.id, up.uuid, up.app_id, up.created_at
            FROM up JOIN input i ON i.platform_id = up.platform_id AND i.token = up.token
        ), new_topics AS (
            INSERT INTO topics (app_id, name, created_at)
            SELECT DISTINCT i.app_id, s.tag, $16::bigint FROM subscriptions s JOIN input i ON i.position = s.position
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
        SELECT position, id, uuid, created_at FROM matched
        """
    typealias Row = PostgresRow

    let batch: RegistrationBatch

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 16)
        try bindings.append(batch.uuid)
        try bindings.append(batch.applicationID)
        try bindings.append(batch.platformID)
        try bindings.append(batch.platformType)
        try bindings.append(batch.token)
        try bindings.append(batch.os)
        bindings.append(NullableTextArray(values: batch.osVersion))
        bindings.append(NullableTextArray(values: batch.deviceAlias))
        bindings.append(NullableTextArray(values: batch.deviceModel))
        bindings.append(NullableTextArray(values: batch.deviceManufacturer))
        bindings.append(NullableTextArray(values: batch.customUserID))
        bindings.append(NullableTextArray(values: batch.timeZone))
        try bindings.append(batch.time)
        try bindings.append(batch.tagPosition)
        try bindings.append(batch.tag)
        bindings.append(batch.batchTime)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

/// A one-dimensional `text[]` whose elements may be NULL, in PostgreSQL's binary array format
/// (PostgresNIO encodes arrays of non-optional elements only).
struct NullableTextArray: PostgresNonThrowingEncodable {
    var values: [String?] = []

    static var psqlType: PostgresDataType { .textArray }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        // Header: dimensions, whether any element is NULL, the elements' type.
        buffer.writeInteger(Int32(values.isEmpty ? 0 : 1))
        buffer.writeInteger(Int32(values.contains(nil) ? 1 : 0))
        buffer.writeInteger(PostgresDataType.text.rawValue)
        guard !values.isEmpty else { return }
        // The one dimension: its length and lower bound.
        buffer.writeInteger(Int32(values.count))
        buffer.writeInteger(Int32(1))
        for value in values {
            guard let value else {
                buffer.writeInteger(Int32(-1))
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(Int32(0))
            let written = buffer.writeString(value)
            buffer.setInteger(Int32(written), at: lengthIndex)
        }
    }
}
