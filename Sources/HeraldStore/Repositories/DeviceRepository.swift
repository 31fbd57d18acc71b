import HeraldCore

import struct Foundation.UUID

/// Devices and their tags.
package struct DeviceRepository: Sendable {
    let database: any SQLDatabase
    let clock: EpochClock
    private let batcher: RegistrationBatcher

    init(database: any SQLDatabase, clock: EpochClock) {
        self.database = database
        self.clock = clock
        self.batcher = RegistrationBatcher(database: database)
    }

    static let columns = """
        d.id, d.uuid, d.app_id, d.platform_id, d.platform_type, d.token, d.os, d.os_version, d.device_alias,
        d.device_model, d.device_manufacturer, d.custom_user_id, d.active, d.created_at, d.updated_at
        """

    // MARK: Registration

    /// Registers a device (`POST /v1/registration`): a token already known on this platform
    /// updates that device, keeping its uuid; absent fields are cleared, as a new registration says
    /// everything about the device.
    package func register(on platform: Platform, _ registration: Registration) async throws -> Device {
        guard let token = registration.registrationToken else {
            throw ValidationError(code: "missing_field", message: "registration_token is required", field: "registration_token")
        }
        return try await batcher.register(
            platform: platform, token: token, registration: registration, tags: Self.initialTags(registration.tags),
            time: clock.now.epochMilliseconds)
    }

    /// Registers many devices at once, as `register` would each (imports, benchmarks): a few
    /// thousand per transaction, so a million take seconds rather than a million commits.
    ///
    /// The registrations must carry tokens already normalised for the platform (validated).
    package func importRegistrations(on platform: Platform, _ registrations: [Registration]) async throws {
        let time = clock.now.epochMilliseconds
        let perTransaction = 5000
        for start in stride(from: 0, to: registrations.count, by: perTransaction) {
            let slice = registrations[start..<min(start + perTransaction, registrations.count)]
            let requests = try slice.map { registration in
                guard let token = registration.registrationToken else {
                    throw ValidationError(code: "missing_field", message: "registration_token is required", field: "registration_token")
                }
                return RegistrationBatcher.Request(
                    platform: platform, token: token, registration: registration, tags: Self.initialTags(registration.tags),
                    time: time, candidate: .timeOrdered(milliseconds: time), complete: { _ in })
            }
            try await database.transaction { connection in
                for chunk in stride(from: 0, to: requests.count, by: RegistrationBatcher.maximumBatch) {
                    _ = try await RegistrationBatcher.write(
                        Array(requests[chunk..<min(chunk + RegistrationBatcher.maximumBatch, requests.count)]), on: connection)
                }
            }
        }
    }

    /// Updates a device (`PUT /v1/registration/:uuid`): absent fields keep their values.
    ///
    /// A uuid this platform does not know, with a token in the body, registers the token as `register`
    /// would (the iOS SDK keeps PUTting to a uuid it once had); a uuid of another platform is not found.
    /// A token that another device of this platform holds moves to this device, and the stale
    /// device is removed: one token is one device.
    package func update(on platform: Platform, uuid: UUID, _ registration: Registration) async throws -> Device? {
        let time = clock.now.epochMilliseconds
        return try await database.transaction { connection -> Device? in
            // Locked: the fields the body leaves out are written back as read, and the tag limit
            // counts what the device holds (docs/ARCHITECTURE.md, "Concurrency on PostgreSQL").
            let rows = try await connection.query(
                "SELECT \(unsafeRaw: Self.columns) FROM devices d WHERE d.uuid = \(uuid)\(connection.dialect.rowLock(.noKeyUpdate))")
            guard let row = rows.first else {
                guard let token = registration.registrationToken else { return nil }
                let request = RegistrationBatcher.Request(
                    platform: platform, token: token, registration: registration, tags: Self.initialTags(registration.tags),
                    time: time, candidate: .timeOrdered(milliseconds: time), complete: { _ in })
                return try await RegistrationBatcher.write([request], on: connection).first
            }
            var device = try Self.device(row)
            guard device.platformID == platform.id else { return nil }

            if let token = registration.registrationToken, token != device.registrationToken {
                try await connection.query(
                    "DELETE FROM devices WHERE platform_id = \(platform.id) AND token = \(token) AND id <> \(device.id)")
                device.registrationToken = token
            }
            device.os = registration.os ?? device.os
            device.osVersion = registration.osVersion.applied(to: device.osVersion)
            device.deviceAlias = registration.deviceAlias.applied(to: device.deviceAlias)
            device.deviceModel = registration.deviceModel.applied(to: device.deviceModel)
            device.deviceManufacturer = registration.deviceManufacturer.applied(to: device.deviceManufacturer)
            device.customUserID = registration.customUserID.applied(to: device.customUserID)
            device.active = true
            device.updatedAt = time
            try await connection.query(
                """
                UPDATE devices SET token = \(device.registrationToken), os = \(device.os), os_version = \(device.osVersion),
                    device_alias = \(device.deviceAlias), device_model = \(device.deviceModel),
                    device_manufacturer = \(device.deviceManufacturer), custom_user_id = \(device.customUserID),
                    active = 1, updated_at = \(time)
                WHERE id = \(device.id)
                """)

            switch registration.tags {
            case .unchanged:
                break
            case .replace(let tags):
                try await connection.query("DELETE FROM device_tags WHERE device_id = \(device.id)")
                try await Self.insertTags(connection, deviceID: device.id, applicationID: device.applicationID, tags: tags, time: time)
            case .delta(let subscribe, let unsubscribe):
                if !unsubscribe.isEmpty {
                    try await connection.query(
                        "DELETE FROM device_tags WHERE device_id = \(device.id) AND tag IN (\(list: unsubscribe))")
                }
                let added = subscribe.filter { !unsubscribe.contains($0) }
                try await Self.insertTags(connection, deviceID: device.id, applicationID: device.applicationID, tags: added, time: time)
            }
            device.tags = try await Self.tags(connection, deviceID: device.id)
            guard device.tags.count <= Limits.tagsPerDevice else {
                throw ValidationError(
                    code: "limit_exceeded",
                    message: "a device may hold at most \(Limits.tagsPerDevice) tags; this change would give it \(device.tags.count)",
                    field: "tags.subscribe")
            }
            return device
        }
    }

    // MARK: Reading

    /// The device with `uuid` on `platformID`; nil for a device of any other platform.
    package func find(platformID: UUID, uuid: UUID) async throws -> Device? {
        let rows = try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM devices d WHERE d.uuid = \(uuid) AND d.platform_id = \(platformID)")
        guard var device = try rows.first.map(Self.device) else { return nil }
        device.tags = try await Self.tags(database, deviceID: device.id)
        return device
    }

    /// How many devices are registered on the platform.
    package func count(platformID: UUID) async throws -> Int {
        let rows = try await database.query("SELECT COUNT(*) AS n FROM devices WHERE platform_id = \(platformID)")
        return Int(try rows.first?.int("n") ?? 0)
    }

    /// Deletes the device with `uuid` from `platformID`; false if the platform has no such device.
    package func delete(platformID: UUID, uuid: UUID) async throws -> Bool {
        try await database.transaction { connection in
            let rows = try await connection.query(
                "SELECT id FROM devices WHERE uuid = \(uuid) AND platform_id = \(platformID)")
            guard let id = try rows.first?.int("id") else { return false }
            try await connection.query("DELETE FROM device_tags WHERE device_id = \(id)")
            try await connection.query("DELETE FROM devices WHERE id = \(id)")
            return true
        }
    }

    /// One page of an application's devices, newest registration id last, with the total that match.
    package func search(applicationID: UUID, filter: DeviceFilter, page: Int, size: Int) async throws -> (devices: [Device], total: Int) {
        var condition: SQL = "d.app_id = \(applicationID)"
        if let type = filter.platformType {
            condition.append(" AND d.platform_type = \(type.rawValue)")
        }
        if let platformID = filter.platformID {
            condition.append(" AND d.platform_id = \(platformID)")
        }
        if let topic = filter.topic {
            condition.append(
                " AND EXISTS (SELECT 1 FROM device_tags t WHERE t.device_id = d.id AND t.app_id = \(applicationID) AND t.tag = \(topic.lowercased()))"
            )
        }
        if let query = filter.query, !query.isEmpty {
            let pattern = "%" + Self.escapeLike(query.lowercased()) + "%"
            condition.append(
                """
                 AND (lower(d.uuid) LIKE \(pattern) ESCAPE '\\' OR lower(d.token) LIKE \(pattern) ESCAPE '\\'
                    OR lower(d.custom_user_id) LIKE \(pattern) ESCAPE '\\' OR lower(d.device_alias) LIKE \(pattern) ESCAPE '\\')
                """)
        }
        let total = try await database.query("SELECT COUNT(*) AS n FROM devices d WHERE \(condition)").first?.int("n") ?? 0
        guard size > 0 else { return ([], Int(total)) }
        let offset = max(0, page - 1) * size
        var devices = try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM devices d WHERE \(condition) ORDER BY d.id LIMIT \(size) OFFSET \(offset)"
        ).map(Self.device)
        if !devices.isEmpty {
            let ids = devices.map(\.id)
            var tagsByDevice: [Int64: [String]] = [:]
            for row in try await database.query(
                "SELECT device_id, tag FROM device_tags WHERE device_id IN (\(list: ids)) ORDER BY tag")
            {
                tagsByDevice[try row.int("device_id"), default: []].append(try row.string("tag"))
            }
            for index in devices.indices { devices[index].tags = tagsByDevice[devices[index].id] ?? [] }
        }
        return (devices, Int(total))
    }

    // MARK: Helpers

    /// The tags of a device that is registered anew.
    static func initialTags(_ change: TagsChange) -> [String] {
        switch change {
        case .unchanged: []
        case .replace(let list): list
        case .delta(let subscribe, let unsubscribe): subscribe.filter { !unsubscribe.contains($0) }
        }
    }

    /// Subscribes the device to `tags`, creating the topics that do not exist yet.
    static func insertTags(_ connection: any SQLExecutor, deviceID: Int64, applicationID: UUID, tags: [String], time: Int64) async throws {
        guard !tags.isEmpty else { return }
        try await TopicRepository.ensure(connection, tags.map { (applicationID, $0) }, time: time)
        // Chunks keep the number of bound values well under both backends' limits.
        for start in stride(from: 0, to: tags.count, by: 256) {
            let chunk = tags[start..<min(start + 256, tags.count)]
            var sql: SQL = "INSERT INTO device_tags (device_id, app_id, tag) VALUES "
            for (index, tag) in chunk.enumerated() {
                sql.append(index == 0 ? "(\(deviceID), \(applicationID), \(tag))" : ", (\(deviceID), \(applicationID), \(tag))")
            }
            sql.append(" ON CONFLICT (device_id, tag) DO NOTHING")
            try await connection.query(sql)
        }
    }

    static func tags(_ connection: any SQLExecutor, deviceID: Int64) async throws -> [String] {
        try await connection.query("SELECT tag FROM device_tags WHERE device_id = \(deviceID) ORDER BY tag").map { try $0.string("tag") }
    }

    static func defaultOS(_ type: PlatformType) -> String {
        switch type {
        case .ios: "ios"
        case .android: "android"
        case .web: "web"
        case .windows: "windows8"
        }
    }

    static func escapeLike(_ text: String) -> String {
        var out = ""
        for char in text {
            if char == "%" || char == "_" || char == "\\" { out.append("\\") }
            out.append(char)
        }
        return out
    }

    static func device(_ row: SQLRow) throws -> Device {
        guard let type = PlatformType(rawValue: try row.string("platform_type")) else {
            throw StoreError.decoding(column: "platform_type", expected: "a platform type")
        }
        return Device(
            id: try row.int("id"), uuid: try row.uuid("uuid"), applicationID: try row.uuid("app_id"),
            platformID: try row.uuid("platform_id"), platformType: type, os: try row.string("os"),
            osVersion: try row.optionalString("os_version"), deviceAlias: try row.optionalString("device_alias"),
            deviceModel: try row.optionalString("device_model"), deviceManufacturer: try row.optionalString("device_manufacturer"),
            registrationToken: try row.string("token"), customUserID: try row.optionalString("custom_user_id"),
            tags: [], active: try row.bool("active"), createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
    }
}

/// Which devices a search returns.
package struct DeviceFilter: Sendable, Equatable {
    package var platformType: PlatformType?
    package var platformID: UUID?
    /// A tag the device must be subscribed to.
    package var topic: String?
    /// Text contained in the uuid, token, custom user id or alias (case-insensitive).
    package var query: String?

    package init(platformType: PlatformType? = nil, platformID: UUID? = nil, topic: String? = nil, query: String? = nil) {
        self.platformType = platformType
        self.platformID = platformID
        self.topic = topic
        self.query = query
    }
}
