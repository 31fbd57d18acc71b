import HeraldCore

import struct Foundation.UUID

/// A page of an export: its devices' lines, written by the database.
package struct ExportPage: Sendable, Equatable {
    /// The internal id of the page's last device: the next page starts after it.
    package var lastID: Int64
    /// How many devices (lines) the page holds.
    package var count: Int
    /// One JSON object a device, in id order, separated by `\n` (none after the last).
    package var lines: String
}

/// What became of one device of an import.
package enum DeviceImportOutcome: Sendable, Equatable {
    /// A device this application did not have, created with its uuid.
    case imported
    /// The application's device with this uuid, overwritten with the line's values.
    case updated
    /// Not written, for the reason given (nothing of it was).
    case rejected(ValidationError)
}

extension DeviceRepository {
    // MARK: Export

    /// Where the export's page after internal id `after` ends: the id of the application's
    /// `limit`-th device after it (or of its last, if fewer follow); nil when none does. An
    /// index-only range scan, so that the pages themselves can be read at once, each by its own
    /// connection (`exportPage(applicationID:after:through:)`).
    package func exportPageEnd(applicationID: UUID, after: Int64, limit: Int) async throws -> Int64? {
        try await database.query(
            """
            SELECT MAX(id) AS id FROM (SELECT id FROM devices WHERE app_id = \(applicationID) AND id > \(after) ORDER BY id LIMIT \(limit)) AS page
            """
        ).first?.optionalInt("id")
    }

    /// The application's devices with internal ids in `after + 1 ... through`, in id order, as
    /// their export lines; nil when there are none. A keyset page: an export of any size holds a
    /// few pages at a time, and each page costs an index range scan.
    package func exportPage(applicationID: UUID, after: Int64, through: Int64) async throws -> ExportPage? {
        let statement = database.dialect == .sqlite ? Self.sqliteExport : Self.postgresExport
        let rows = try await database.query(
            """
            \(unsafeRaw: statement.head) WHERE d.app_id = \(applicationID) AND d.id > \(after) AND d.id <= \(through) ORDER BY d.id\(unsafeRaw: statement.tail)
            """)
        guard let row = rows.first, case .text(let lines) = row["lines"] else { return nil }
        return ExportPage(lastID: try row.int("last"), count: Int(try row.int("count")), lines: lines)
    }

    /// What one key of an export line holds.
    enum ExportValue {
        /// The column as it is (text, an integer, or null).
        case column(String)
        /// An integer column as `true`/`false`.
        case flag(String)
        /// The device's tags, a sorted list of strings.
        case tags
        /// A quiet time column (stored `HH:MM-HH:MM`, `QuietTime.stored`) as `{"start","end"}`;
        /// a line whose column is null has no such key at all (not `null`), so that it keeps
        /// the shape the import's scanner reads (`DeviceImportLine.scan`).
        case quietTime(String)
    }

    /// The keys of an export line, in their order, and what each holds: the one description
    /// of the line's shape, from which both dialects' statements are written. It is the shape
    /// `DeviceImportLine` reads.
    static let exportLine: [(key: String, value: ExportValue)] = [
        ("device_uuid", .column("uuid")), ("platform_uuid", .column("platform_id")), ("os", .column("os")),
        ("os_version", .column("os_version")), ("device_model", .column("device_model")),
        ("device_manufacturer", .column("device_manufacturer")), ("device_alias", .column("device_alias")),
        ("registration_token", .column("token")), ("tags", .tags), ("custom_user_id", .column("custom_user_id")),
        ("time_zone", .column("time_zone")), ("quiet_time", .quietTime("quiet_time")), ("active", .flag("active")),
        ("created_at", .column("created_at")), ("updated_at", .column("updated_at")), ("badge", .column("badge")),
    ]

    /// The export line's two shapes: the column whose null leaves its key out, the keys of a
    /// line where it is null, and the keys of one where it is not (each dialect writes a
    /// `CASE` of the two, so a device's tags are read once).
    private static var exportLineShapes:
        (optional: String, without: [(key: String, value: ExportValue)], with: [(key: String, value: ExportValue)])
    {
        var optional: [String] = []
        for (_, value) in exportLine {
            if case .quietTime(let column) = value { optional.append(column) }
        }
        precondition(optional.count == 1, "the export's statements are written for one key left out when null")
        let without = exportLine.filter { _, value in
            if case .quietTime = value { return false }
            return true
        }
        return (optional[0], without, exportLine)
    }

    // The statements that read a page, around its `WHERE … LIMIT`: the database writes each
    // device's JSON object (SQLite's `json_object`, PostgreSQL's `row_to_json`: both compact, in
    // the keys' order) and joins the page's lines into one text, which Herald copies into the
    // response as it is. Reading the columns into Swift values and writing the lines there cost
    // several times more CPU a device, most of it the drivers' per-row work
    // (docs/benchmarks-history.md, device export).

    private static let sqliteExport: (head: String, tail: String) = {
        func object(_ line: [(key: String, value: ExportValue)]) -> String {
            let members = line.map { key, value in
                let expression =
                    switch value {
                    case .column(let column): "d.\(column)"
                    case .flag(let column): "json(CASE WHEN d.\(column) <> 0 THEN 'true' ELSE 'false' END)"
                    // `json(…)`: a list inside the object (a subquery's result is a plain string to
                    // `json_object` otherwise).
                    case .tags: "json((SELECT json_group_array(t.tag ORDER BY t.tag) FROM device_tags t WHERE t.device_id = d.id))"
                    case .quietTime(let column): "json_object('start', substr(d.\(column), 1, 5), 'end', substr(d.\(column), 7, 5))"
                    }
                return "'\(key)', \(expression)"
            }
            return "json_object(\(members.joined(separator: ", ")))"
        }
        let shapes = exportLineShapes
        return (
            """
            SELECT MAX(id) AS last, COUNT(*) AS count, group_concat(line, char(10) ORDER BY id) AS lines FROM (
                SELECT d.id AS id,
                    CASE WHEN d.\(shapes.optional) IS NULL THEN \(object(shapes.without)) ELSE \(object(shapes.with)) END AS line
                FROM devices d
            """,
            ")"
        )
    }()

    private static let postgresExport: (head: String, tail: String) = {
        func columns(_ line: [(key: String, value: ExportValue)]) -> String {
            line.map { key, value in
                switch value {
                case .column(let column): "d.\(column) AS \(key)"
                case .flag(let column): "d.\(column) <> 0 AS \(key)"
                case .tags: "ARRAY(SELECT t.tag FROM device_tags t WHERE t.device_id = d.id ORDER BY t.tag) AS \(key)"
                // `::json` keeps the text as written (compact, in this order).
                case .quietTime(let column):
                    #"('{"start":"' || substr(d.\#(column), 1, 5) || '","end":"' || substr(d.\#(column), 7, 5) || '"}')::json AS \#(key)"#
                }
            }.joined(separator: ", ")
        }
        let shapes = exportLineShapes
        // Both laterals are plain projections, which the planner folds into the row expressions
        // of the `CASE`; only the branch taken is evaluated (the tags read once).
        return (
            """
            SELECT MAX(p.id) AS last, COUNT(*) AS count, string_agg(p.line, chr(10) ORDER BY p.id) AS lines FROM (
                SELECT d.id, CASE WHEN d.\(shapes.optional) IS NULL THEN row_to_json(x)::text ELSE row_to_json(y)::text END AS line
                FROM devices d CROSS JOIN LATERAL (SELECT \(columns(shapes.without))) AS x
                    CROSS JOIN LATERAL (SELECT \(columns(shapes.with))) AS y
            """,
            ") AS p"
        )
    }()

    // MARK: Import

    /// The most devices one SQLite upsert statement writes (18 bound values each, the id one).
    static let importStatementRows = 250

    /// Writes checked devices of `applicationID` with their uuids, in one transaction: a uuid
    /// this application has is overwritten (idempotent: the same lines again change nothing), a
    /// new one is created. A uuid another application holds (in any tenant), a uuid registered on
    /// another platform of this one, or a token another device of the platform holds is
    /// rejected, never moved. If the transaction fails, each device is written alone, so that
    /// one bad device costs only itself and none is left half-written.
    ///
    /// The outcomes come back in the order of `devices`. `devices` must not repeat a uuid.
    package func importDevices(_ devices: [DeviceImport], applicationID: UUID) async throws -> [DeviceImportOutcome] {
        guard !devices.isEmpty else { return [] }
        let dialect = database.dialect
        // On SQLite the chunk is first written without looking its tokens up: an import's tokens
        // are nearly always new to the platform, and the unique `(platform_id, token)` index
        // checks each as its row goes in. If a token is held by a device outside the chunk, the
        // index refuses the upsert, the transaction is undone, and the chunk is written again
        // with its tokens' holders looked up. The look-up was an index probe per device on the
        // single writer (docs/benchmarks-history.md, device import, fifth pass). A savepoint around the
        // optimistic write, to undo only it, cost more than the look-up: SQLite then keeps a copy
        // of every page the chunk changes. On PostgreSQL the tokens are looked up first, as
        // before: one statement a chunk, on one of several connections writing at once.
        var lookUpTokens = dialect == .postgres
        while true {
            do {
                return try await database.transaction { [lookUpTokens] connection in
                    try await Self.importChunk(
                        devices, applicationID: applicationID, lookUpTokens: lookUpTokens, dialect: dialect, on: connection)
                }
            } catch let error as StoreError where error.reason == .unavailable {
                throw error
            } catch let error as CancellationError {
                throw error
            } catch let error as StoreError where error.reason == .uniqueViolation && !lookUpTokens {
                lookUpTokens = true
            } catch is TokenLookUpNeeded {
                lookUpTokens = true
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
    }

    /// Thrown by a chunk written without its tokens looked up when its upsert kept a device (one
    /// of this application whose token would change, or a uuid another application or platform
    /// holds): the chunk is written again with its tokens looked up, which says why.
    private struct TokenLookUpNeeded: Error {}

    /// Why a device could not be written, for the report.
    static func importFailure(_ error: any Error) -> ValidationError {
        if let error = error as? StoreError, error.reason == .uniqueViolation {
            return ValidationError(
                code: "conflict", message: "another device of this platform took the token meanwhile", field: "registration_token")
        }
        return ValidationError(code: "not_written", message: "the device could not be written: \(error)")
    }

    /// Writes a chunk: a device whose token another device holds (outside the chunk, looked up
    /// if `lookUpTokens`, or earlier in it) is rejected; the others are upserted with their tags.
    static func importChunk(
        _ devices: [DeviceImport], applicationID: UUID, lookUpTokens: Bool, dialect: SQLDialect, on connection: any SQLExecutor
    ) async throws -> [DeviceImportOutcome] {
        let keys = devices.map { RegistrationBatcher.DeviceKey(platformID: $0.platform.id, token: $0.registration.registrationToken ?? "") }
        let holders = lookUpTokens ? try await tokenHolders(keys, dialect: dialect, on: connection) : [:]

        // Each device: rejected for its token, or written (new or over its own row).
        var outcomes: [DeviceImportOutcome?] = Array(repeating: nil, count: devices.count)
        var accepted: [DeviceImport] = []
        accepted.reserveCapacity(devices.count)
        var acceptedIndexes: [Int] = []
        acceptedIndexes.reserveCapacity(devices.count)
        var tokensInChunk: [RegistrationBatcher.DeviceKey: UUID] = [:]
        tokensInChunk.reserveCapacity(devices.count)
        for (index, (device, key)) in zip(devices, keys).enumerated() {
            if let other = holders[key] ?? tokensInChunk[key], other != device.uuid {
                outcomes[index] = .rejected(
                    ValidationError(
                        code: "conflict", message: "device \(other.lowercasedString) of this platform holds this token",
                        field: "registration_token"))
                continue
            }
            tokensInChunk[key] = device.uuid
            accepted.append(device)
            acceptedIndexes.append(index)
        }
        guard !accepted.isEmpty else { return outcomes.compactMap { $0 } }

        // The devices, upserted on their uuid; a uuid another application or platform holds is
        // left as it is and comes back without a row. The uuids are not looked up first: the
        // upsert itself says which devices it created and which it overwrote, and which it left
        // alone (its `WHERE`); only those few are looked up afterwards, for the reason. (A
        // look-up of every uuid before the upsert was an index probe per device and 4 statements
        // per 2,000 on SQLite.)
        //
        // Without the tokens looked up, a device of this application whose token would change is
        // kept too: the token it gives up might be one a later line takes, which the import
        // refuses (it never moves a token to another device), and only the look-up knows.
        let written = try await upsert(
            accepted, applicationID: applicationID, keepingTokens: !lookUpTokens, dialect: dialect, on: connection)
        var existing: [Int64] = []
        var kept: [UUID] = []
        for (device, index) in zip(accepted, acceptedIndexes) {
            guard let row = written[device.uuid] else {
                kept.append(device.uuid)
                continue
            }
            if row.inserted {
                outcomes[index] = .imported
            } else {
                outcomes[index] = .updated
                existing.append(row.id)
            }
        }
        if !kept.isEmpty && !lookUpTokens { throw TokenLookUpNeeded() }
        if !kept.isEmpty {
            let holders = try await uuidHolders(kept, dialect: dialect, on: connection)
            for (device, index) in zip(accepted, acceptedIndexes) where written[device.uuid] == nil {
                guard let holder = holders[device.uuid] else {
                    throw StoreError(
                        reason: .unknown("upsert"), message: "the device upsert returned no row for \(device.uuid.lowercasedString)")
                }
                if holder.applicationID != applicationID {
                    outcomes[index] = .rejected(
                        ValidationError(
                            code: "conflict", message: "this device_uuid belongs to another application; it is not moved",
                            field: "device_uuid"))
                } else {
                    outcomes[index] = .rejected(
                        ValidationError(
                            code: "conflict",
                            message:
                                "this device is registered on platform \(holder.platformID.lowercasedString) of this application; it is not moved",
                            field: "platform_uuid"))
                }
            }
        }

        // Their tags: the line's list replaces what an existing device had.
        try await deleteTags(of: existing, dialect: dialect, on: connection)
        var tagRows: [DeviceTagRow] = []
        tagRows.reserveCapacity(accepted.count * 2)
        var latest: Int64 = 0
        for device in accepted {
            guard let row = written[device.uuid] else { continue }
            latest = max(latest, device.updatedAt)
            for tag in device.tags { tagRows.append(DeviceTagRow(deviceID: row.id, applicationID: applicationID, tag: tag)) }
        }
        try await insertTags(tagRows, time: latest, dialect: dialect, on: connection)
        return outcomes.compactMap { $0 }
    }

    /// The devices holding `uuids` (any application, any tenant), by uuid.
    static func uuidHolders(_ uuids: [UUID], dialect: SQLDialect, on connection: any SQLExecutor) async throws
        -> [UUID: (id: Int64, applicationID: UUID, platformID: UUID)]
    {
        var holders: [UUID: (id: Int64, applicationID: UUID, platformID: UUID)] = [:]
        func read(_ rows: [SQLRow]) throws {
            for row in rows {
                holders[try row.uuid("uuid")] = (try row.int("id"), try row.uuid("app_id"), try row.uuid("platform_id"))
            }
        }
        switch dialect {
        case .postgres:
            // The chunk's uuids as one array value: one statement whatever the chunk's size. A
            // lateral look-up per uuid: with `uuid = ANY(…)` of 2,000 uuids the planner chose a
            // sequential scan of the table, and so would grow
            // quadratic over an import. `LIMIT 1` (a uuid is unique) keeps the planner from
            // flattening the lateral query back into that join.
            let list = PostgresTextArray(uuids.map(\.lowercasedString))
            try read(
                try await connection.query(
                    """
                    SELECT d.id, d.uuid, d.app_id, d.platform_id FROM unnest(\(list.text)::text[]) AS k(uuid)
                    CROSS JOIN LATERAL (SELECT id, uuid, app_id, platform_id FROM devices WHERE devices.uuid = k.uuid LIMIT 1) AS d
                    """))
        case .sqlite:
            for start in stride(from: 0, to: uuids.count, by: 500) {
                let slice = Array(uuids[start..<min(start + 500, uuids.count)])
                try read(try await connection.query("SELECT id, uuid, app_id, platform_id FROM devices WHERE uuid IN (\(list: slice))"))
            }
        }
        return holders
    }

    /// The devices holding these (platform, token) pairs, by pair.
    static func tokenHolders(_ keys: [RegistrationBatcher.DeviceKey], dialect: SQLDialect, on connection: any SQLExecutor) async throws
        -> [RegistrationBatcher.DeviceKey: UUID]
    {
        var holders: [RegistrationBatcher.DeviceKey: UUID] = [:]
        switch dialect {
        case .postgres:
            let platforms = PostgresTextArray(keys.map(\.platformID.lowercasedString))
            let tokens = PostgresTextArray(keys.map(\.token))
            // Lateral, as for the uuids: a hash join over the whole table otherwise.
            for row in try await connection.query(
                """
                SELECT d.uuid, d.platform_id, d.token FROM unnest(\(platforms.text)::text[], \(tokens.text)::text[]) AS k(platform_id, token)
                CROSS JOIN LATERAL (
                    SELECT uuid, platform_id, token FROM devices WHERE devices.platform_id = k.platform_id AND devices.token = k.token LIMIT 1
                ) AS d
                """)
            {
                holders[.init(platformID: try row.uuid("platform_id"), token: try row.string("token"))] = try row.uuid("uuid")
            }
        case .sqlite:
            var tokensByPlatform: [UUID: [String]] = [:]
            for key in keys { tokensByPlatform[key.platformID, default: []].append(key.token) }
            for (platformID, tokens) in tokensByPlatform {
                for start in stride(from: 0, to: tokens.count, by: 500) {
                    let slice = Array(tokens[start..<min(start + 500, tokens.count)])
                    for row in try await connection.query(
                        "SELECT uuid, token FROM devices WHERE platform_id = \(platformID) AND token IN (\(list: slice))")
                    {
                        holders[.init(platformID: platformID, token: try row.string("token"))] = try row.uuid("uuid")
                    }
                }
            }
        }
        return holders
    }

    /// The columns an import writes, and what a uuid already there gets: its own row only (the
    /// `WHERE` keeps a device of another application or platform where it is, and the upsert
    /// then returns no row for it).
    private static let upsertColumns = """
        uuid, app_id, platform_id, platform_type, token, os, os_version, device_alias, device_model,
            device_manufacturer, custom_user_id, time_zone, active, created_at, updated_at, quiet_time, badge
        """
    private static func upsertConflict(keepingTokens: Bool) -> String {
        upsertConflict + (keepingTokens ? " AND devices.token = excluded.token" : "")
    }

    private static let upsertConflict = """
        ON CONFLICT (uuid) DO UPDATE SET
            token = excluded.token, os = excluded.os, os_version = excluded.os_version, device_alias = excluded.device_alias,
            device_model = excluded.device_model, device_manufacturer = excluded.device_manufacturer,
            custom_user_id = excluded.custom_user_id, time_zone = excluded.time_zone, active = excluded.active,
            created_at = excluded.created_at, updated_at = excluded.updated_at, quiet_time = excluded.quiet_time,
            badge = excluded.badge
        WHERE devices.app_id = excluded.app_id AND devices.platform_id = excluded.platform_id
        """

    /// Writes the devices; by uuid, the id of each device written and whether it was created
    /// (rather than overwritten). A device whose uuid another application or platform holds is
    /// not written and not in the answer, nor, if `keepingTokens` (SQLite only), one of this
    /// application whose token would change.
    static func upsert(
        _ devices: [DeviceImport], applicationID: UUID, keepingTokens: Bool, dialect: SQLDialect, on connection: any SQLExecutor
    ) async throws -> [UUID: (id: Int64, inserted: Bool)] {
        switch dialect {
        case .sqlite:
            return try await upsertSQLite(devices, applicationID: applicationID, keepingTokens: keepingTokens, on: connection)
        case .postgres:
            precondition(!keepingTokens, "PostgreSQL's import looks its tokens up first")
            return try await upsertPostgres(devices, applicationID: applicationID, on: connection)
        }
    }

    /// PostgreSQL's upsert, which says which rows it created (`xmax = 0`: no earlier version).
    static func upsertPostgres(_ devices: [DeviceImport], applicationID: UUID, on connection: any SQLExecutor) async throws
        -> [UUID: (id: Int64, inserted: Bool)]
    {
        // Each column as one array, zipped back into rows by unnest: the statement's text is
        // the same for every chunk and PostgreSQL parses fifteen values, not fifteen per device.
        var columns = (
            uuid: PostgresTextArray(), platformID: PostgresTextArray(), platformType: PostgresTextArray(), token: PostgresTextArray(),
            os: PostgresTextArray(), osVersion: PostgresTextArray(), deviceAlias: PostgresTextArray(), deviceModel: PostgresTextArray(),
            deviceManufacturer: PostgresTextArray(), customUserID: PostgresTextArray(), timeZone: PostgresTextArray(),
            active: PostgresTextArray(), createdAt: PostgresTextArray(), updatedAt: PostgresTextArray(), quietTime: PostgresTextArray(),
            badge: PostgresTextArray()
        )
        for device in devices {
            let registration = device.registration
            columns.uuid.append(device.uuid.lowercasedString)
            columns.platformID.append(device.platform.id.lowercasedString)
            columns.platformType.append(device.platform.type.rawValue)
            columns.token.append(registration.registrationToken ?? "")
            columns.os.append(registration.os ?? Self.defaultOS(device.platform.type))
            columns.osVersion.append(registration.osVersion.applied(to: nil))
            columns.deviceAlias.append(registration.deviceAlias.applied(to: nil))
            columns.deviceModel.append(registration.deviceModel.applied(to: nil))
            columns.deviceManufacturer.append(registration.deviceManufacturer.applied(to: nil))
            columns.customUserID.append(registration.customUserID.applied(to: nil))
            columns.timeZone.append(registration.timeZone.applied(to: nil))
            columns.active.append(integer: device.active ? 1 : 0)
            columns.createdAt.append(integer: device.createdAt)
            columns.updatedAt.append(integer: device.updatedAt)
            columns.quietTime.append(device.quietTime?.stored)
            columns.badge.append(integer: device.badge)
        }
        let rows = try await connection.query(
            """
            INSERT INTO devices (\(unsafeRaw: upsertColumns))
            SELECT uuid, \(applicationID), platform_id, platform_type, token, os, os_version, device_alias, device_model,
                device_manufacturer, custom_user_id, time_zone, active, created_at, updated_at, quiet_time, badge
            FROM unnest(\(columns.uuid.text)::text[], \(columns.platformID.text)::text[], \(columns.platformType.text)::text[],
                \(columns.token.text)::text[], \(columns.os.text)::text[], \(columns.osVersion.text)::text[],
                \(columns.deviceAlias.text)::text[], \(columns.deviceModel.text)::text[], \(columns.deviceManufacturer.text)::text[],
                \(columns.customUserID.text)::text[], \(columns.timeZone.text)::text[], \(columns.active.text)::bigint[],
                \(columns.createdAt.text)::bigint[], \(columns.updatedAt.text)::bigint[], \(columns.quietTime.text)::text[],
                \(columns.badge.text)::bigint[])
                AS x(uuid, platform_id, platform_type, token, os, os_version, device_alias, device_model, device_manufacturer,
                    custom_user_id, time_zone, active, created_at, updated_at, quiet_time, badge)
            \(unsafeRaw: upsertConflict)
            RETURNING id, uuid, (xmax = 0) AS inserted
            """)
        var written: [UUID: (id: Int64, inserted: Bool)] = [:]
        written.reserveCapacity(devices.count)
        for row in rows {
            let values = row.values
            guard values.count == 3, case .int(let id) = values[0], case .text(let text) = values[1], let uuid = UUID(text: text),
                case .int(let flag) = values[2]
            else {
                throw StoreError.decoding(column: "devices", expected: "id, uuid, inserted")
            }
            written[uuid] = (id, flag != 0)
        }
        return written
    }

    /// SQLite's upsert. The writer is single, so the devices get their ids from Herald: the
    /// `i`-th gets the `i + 1`-th id above every id the table has had (its largest, or its
    /// `AUTOINCREMENT` counter if higher), and the upsert returns no rows. A count of the rows
    /// above those ids afterwards says whether every device was created (a fresh import: the
    /// ids are the ones given); only when some were not (their uuid was there: overwritten, or
    /// kept because another application or platform holds it) are the chunk's rows read back.
    /// `RETURNING id, uuid` of every device cost a row handed to an event loop, converted and
    /// parsed for each (docs/benchmarks-history.md, device import, third pass).
    ///
    /// Each statement is still prepared anew: sqlite-nio prepares and finalizes on every `query`
    /// (its `SQLiteStatement` and the connection's `sqlite3` handle are internal), so reusing one
    /// would mean a writer connection of Herald's own over the C library for a small share of
    /// an import's CPU, the multi-row statements already sharing each preparation.
    static func upsertSQLite(_ devices: [DeviceImport], applicationID: UUID, keepingTokens: Bool, on connection: any SQLExecutor)
        async throws
        -> [UUID: (id: Int64, inserted: Bool)]
    {
        let conflict = upsertConflict(keepingTokens: keepingTokens)
        let newAbove =
            try await connection.query(
                """
                SELECT MAX(COALESCE((SELECT MAX(id) FROM devices), 0), COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'devices'), 0)) AS id
                """
            ).first?.int("id") ?? 0
        for start in stride(from: 0, to: devices.count, by: importStatementRows) {
            var insert: SQL = "INSERT INTO devices (id, \(unsafeRaw: upsertColumns)) VALUES "
            for index in start..<min(start + importStatementRows, devices.count) {
                let device = devices[index]
                let registration = device.registration
                insert.append(
                    """
                    \(unsafeRaw: index == start ? "" : ",") (\(newAbove + 1 + Int64(index)), \(device.uuid), \(applicationID), \(device.platform.id),
                    \(device.platform.type.rawValue), \(registration.registrationToken ?? ""),
                    \(registration.os ?? Self.defaultOS(device.platform.type)), \(registration.osVersion.applied(to: nil)),
                    \(registration.deviceAlias.applied(to: nil)), \(registration.deviceModel.applied(to: nil)),
                    \(registration.deviceManufacturer.applied(to: nil)), \(registration.customUserID.applied(to: nil)),
                    \(registration.timeZone.applied(to: nil)), \(device.active ? 1 : 0), \(device.createdAt), \(device.updatedAt),
                    \(device.quietTime?.stored), \(device.badge))
                    """)
            }
            insert.append(" \(unsafeRaw: conflict)")
            try await connection.query(insert)
        }
        var written: [UUID: (id: Int64, inserted: Bool)] = [:]
        written.reserveCapacity(devices.count)
        let created = try await connection.query("SELECT COUNT(*) AS count FROM devices WHERE id > \(newAbove)").first?.int("count") ?? 0
        if created == Int64(devices.count) {
            for (index, device) in devices.enumerated() { written[device.uuid] = (newAbove + 1 + Int64(index), true) }
            return written
        }
        // Some uuids were there: the rows that are now the devices' (their application and
        // platform), created or overwritten by their id; the others were kept as they were.
        var platforms: [UUID: UUID] = [:]
        for device in devices { platforms[device.uuid] = device.platform.id }
        for start in stride(from: 0, to: devices.count, by: 500) {
            let slice = devices[start..<min(start + 500, devices.count)].map(\.uuid)
            for row in try await connection.query("SELECT id, uuid, app_id, platform_id FROM devices WHERE uuid IN (\(list: slice))") {
                let uuid = try row.uuid("uuid")
                guard try row.uuid("app_id") == applicationID, try row.uuid("platform_id") == platforms[uuid] else { continue }
                let id = try row.int("id")
                written[uuid] = (id, id > newAbove)
            }
        }
        return written
    }

    /// Removes the tags of devices `ids` (an import replaces them with the line's).
    static func deleteTags(of ids: [Int64], dialect: SQLDialect, on connection: any SQLExecutor) async throws {
        guard !ids.isEmpty else { return }
        switch dialect {
        case .postgres:
            var list = PostgresTextArray()
            for id in ids { list.append(integer: id) }
            try await connection.query("DELETE FROM device_tags WHERE device_id = ANY(\(list.text)::bigint[])")
        case .sqlite:
            for start in stride(from: 0, to: ids.count, by: 500) {
                try await connection.query(
                    "DELETE FROM device_tags WHERE device_id IN (\(list: Array(ids[start..<min(start + 500, ids.count)])))")
            }
        }
    }

    /// Subscribes the chunk's devices to their tags (`subscribe`'s rules: each tag a live topic
    /// first). The devices have no tags at this point (new, or theirs just deleted, their rows
    /// locked by this transaction), so on PostgreSQL the rows go in as two arrays in one plain
    /// `INSERT`: no per-row conflict check, no 300-row statements to plan. A row that is there
    /// after all fails the chunk, which is then written device by device.
    static func insertTags(_ rows: [DeviceTagRow], time: Int64, dialect: SQLDialect, on connection: any SQLExecutor) async throws {
        guard !rows.isEmpty else { return }
        switch dialect {
        case .sqlite:
            try await subscribe(rows, time: time, on: connection)
        case .postgres:
            try await TopicRepository.ensure(connection, rows.map { ($0.applicationID, $0.tag) }, time: time)
            // Grouped by application (an import has one) so that each statement binds one.
            var byApp: [UUID: (ids: PostgresTextArray, tags: PostgresTextArray)] = [:]
            for row in rows {
                var columns = byApp.removeValue(forKey: row.applicationID) ?? (PostgresTextArray(), PostgresTextArray())
                columns.ids.append(integer: row.deviceID)
                columns.tags.append(row.tag)
                byApp[row.applicationID] = columns
            }
            for (applicationID, columns) in byApp {
                try await connection.query(
                    """
                    INSERT INTO device_tags (device_id, app_id, tag)
                    SELECT device_id, \(applicationID), tag FROM unnest(\(columns.ids.text)::bigint[], \(columns.tags.text)::text[]) AS t(device_id, tag)
                    """)
            }
        }
    }

    /// Refreshes the planner's statistics of the device tables after a large import, so that
    /// the next fan-out is not planned on the empty tables' figures (PostgreSQL; SQLite's
    /// `ANALYZE` likewise feeds its query planner).
    package func refreshStatistics() async throws {
        try await database.query("ANALYZE devices")
        try await database.query("ANALYZE device_tags")
        try await database.query("ANALYZE topics")
    }
}
