import HeraldCore

import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONEncoder
import struct Foundation.UUID

/// Platforms, their secrets (hashed for authentication, sealed for signing) and their sealed credentials.
package struct PlatformRepository: Sendable {
    let database: any SQLDatabase
    let secretBox: SecretBox
    let clock: EpochClock
    /// Announced after a change that queued a webhook event (`WorkKind.webhookEvents`).
    let work: WorkSignals
    private let cache = CredentialCache<Platform>()

    private static let columns =
        "id, app_id, name, type, credentials_summary, credentials_status, fcm_notification, created_at, updated_at"

    /// Creates a platform and returns it with its clear secret.
    ///
    /// - Parameters:
    ///   - id: a uuid the operator brings (checked by the caller); generated when nil. A uuid that
    ///     any application or platform already has, in any tenant, throws `StoreError` `.uniqueViolation`.
    ///   - secret: a secret the operator brings (checked by the caller); generated when nil. Stored
    ///     hashed and sealed, as a generated one.
    ///   - fcmNotification: Android: whether FCM messages carry a notification block (`Platform.fcmNotification`).
    package func create(
        applicationID: UUID, name: String, type: PlatformType, credentials: PlatformCredentials?, id: UUID? = nil, secret: String? = nil,
        fcmNotification: Bool = false
    ) async throws -> (Platform, String) {
        let time = clock.now.epochMilliseconds
        let given = id
        let id = id ?? UUID()
        let secret = secret ?? Secret.generate()
        let platform = Platform(
            id: id, applicationID: applicationID, name: name, type: type,
            credentialsSummary: credentials?.summary, credentialsStatus: credentials == nil ? .missing : .ok,
            fcmNotification: fcmNotification, createdAt: time, updatedAt: time)
        let sealedSecret = try secretBox.seal(Array(secret.utf8), context: Self.secretContext(id))
        let sealedCredentials = try credentials.map { try seal($0, id: id) }
        let summary = try Self.summaryJSON(platform.credentialsSummary)
        try await database.transaction { connection in
            if given != nil { try await ApplicationRepository.requireUnusedIdentity(connection, id) }
            try await connection.query(
                """
                INSERT INTO platforms (id, app_id, name, type, secret_hash, secret_sealed, credentials_sealed,
                    credentials_summary, credentials_status, fcm_notification, created_at, updated_at)
                VALUES (\(id), \(applicationID), \(name), \(type.rawValue), \(Secret.hash(secret)), \(sealedSecret),
                    \(sealedCredentials), \(summary), \(platform.credentialsStatus.rawValue), \(fcmNotification ? 1 : 0),
                    \(time), \(time))
                """)
        }
        return (platform, secret)
    }

    /// The platform, if it exists (and belongs to `applicationID` when given).
    package func find(id: UUID, applicationID: UUID? = nil) async throws -> Platform? {
        let rows = try await database.query("SELECT \(unsafeRaw: Self.columns) FROM platforms WHERE id = \(id)")
        guard let platform = try rows.first.map(Self.platform) else { return nil }
        if let applicationID, platform.applicationID != applicationID { return nil }
        return platform
    }

    /// The platform whose id and secret these are; nil for any mismatch.
    package func authenticate(id: UUID, secret: String) async throws -> Platform? {
        try await cache.authenticate(id, secret: secret, now: clock.now.epochMilliseconds) {
            let rows = try await database.query("SELECT \(unsafeRaw: Self.columns), secret_hash FROM platforms WHERE id = \(id)")
            guard let row = rows.first else { return nil }
            return (try row.string("secret_hash"), try Self.platform(row))
        }
    }

    package func list(applicationID: UUID) async throws -> [Platform] {
        try await database.query(
            "SELECT \(unsafeRaw: Self.columns) FROM platforms WHERE app_id = \(applicationID) ORDER BY created_at, id"
        ).map(Self.platform)
    }

    /// Renames the platform, replaces its credentials (validated by the caller for its type)
    /// and/or changes whether its FCM messages carry a notification block.
    package func update(id: UUID, name: String?, credentials: PlatformCredentials?, fcmNotification: Bool? = nil) async throws -> Platform?
    {
        let time = clock.now.epochMilliseconds
        let sealed = try credentials.map { try seal($0, id: id) }
        let summary = try Self.summaryJSON(credentials?.summary)
        defer { cache.invalidate(id) }
        let (platform, queued) = try await database.transaction { connection -> (Platform?, Bool) in
            // Locked: the fields not given are written back as read, and whether the platform
            // was failing (new credentials then queue `platform.recovered`) is read as it is.
            let rows = try await connection.query(
                "SELECT \(unsafeRaw: Self.columns) FROM platforms WHERE id = \(id)\(connection.dialect.rowLock(.noKeyUpdate))")
            guard var platform = try rows.first.map(Self.platform) else { return (nil, false) }
            if let name { platform.name = name }
            if let fcmNotification { platform.fcmNotification = fcmNotification }
            platform.updatedAt = time
            guard let credentials, let sealed else {
                try await connection.query(
                    """
                    UPDATE platforms SET name = \(platform.name), fcm_notification = \(platform.fcmNotification ? 1 : 0),
                        updated_at = \(platform.updatedAt) WHERE id = \(id)
                    """)
                return (platform, false)
            }
            let wasFailing = platform.credentialsStatus == .failing
            platform.credentialsSummary = credentials.summary
            platform.credentialsStatus = .ok
            try await connection.query(
                """
                UPDATE platforms SET name = \(platform.name), credentials_sealed = \(sealed),
                    credentials_summary = \(summary), credentials_status = \(platform.credentialsStatus.rawValue),
                    fcm_notification = \(platform.fcmNotification ? 1 : 0), updated_at = \(platform.updatedAt)
                WHERE id = \(id)
                """)
            // New credentials for a failing platform: its sends resume.
            guard wasFailing else { return (platform, false) }
            return (platform, try await Self.statusEvent(connection, .platformRecovered, platform))
        }
        if queued { await work.announce(.webhookEvents) }
        return platform
    }

    /// Records whether the provider accepts the credentials.
    ///
    /// A platform that starts failing queues `platform.failing` in the same transaction (once per
    /// change of state: a platform already failing queues nothing).
    package func setCredentialsStatus(id: UUID, _ status: CredentialsStatus) async throws {
        defer { cache.invalidate(id) }
        let time = clock.now.epochMilliseconds
        let queued = try await database.transaction { connection -> Bool in
            let changed = try await connection.query(
                """
                UPDATE platforms SET credentials_status = \(status.rawValue), updated_at = \(time)
                WHERE id = \(id) AND credentials_status <> \(status.rawValue) RETURNING \(unsafeRaw: Self.columns)
                """)
            guard status == .failing, let row = changed.first else { return false }
            return try await Self.statusEvent(connection, .platformFailing, try Self.platform(row))
        }
        if queued { await work.announce(.webhookEvents) }
    }

    /// Queues `platform.failing` or `platform.recovered` for `platform`, if its app wants it.
    static func statusEvent(_ connection: any SQLExecutor, _ type: WebhookEventType, _ platform: Platform) async throws -> Bool {
        guard try await WebhookRepository.wanted(connection, applicationID: platform.applicationID, type: type) else { return false }
        let data: [String: JSONValue] = [
            "platform_id": .string(platform.id.lowercasedString), "name": .string(platform.name),
            "type": .string(platform.type.rawValue), "credentials_status": .string(platform.credentialsStatus.rawValue),
        ]
        let event = WebhookEvent(id: UUID(), type: type, createdAt: platform.updatedAt, applicationID: platform.applicationID, data: data)
        return try await WebhookRepository.enqueue(connection, event)
    }

    /// The decrypted credentials, nil if none were uploaded.
    package func credentials(id: UUID) async throws -> PlatformCredentials? {
        let rows = try await database.query("SELECT credentials_sealed FROM platforms WHERE id = \(id)")
        guard let sealed = try rows.first?.optionalBlob("credentials_sealed") else { return nil }
        let json = try secretBox.open(sealed, context: Self.credentialsContext(id))
        return try JSONDecoder().decode(PlatformCredentials.self, from: Data(json))
    }

    /// The platform's clear secret (the HMAC key of signed custom user ids).
    package func secret(id: UUID) async throws -> String? {
        let rows = try await database.query("SELECT secret_sealed FROM platforms WHERE id = \(id)")
        guard let sealed = try rows.first?.blob("secret_sealed") else { return nil }
        return String(decoding: try secretBox.open(sealed, context: Self.secretContext(id)), as: UTF8.self)
    }

    /// Replaces the secret; the old one stops working at once. Returns the new clear secret.
    package func regenerateSecret(id: UUID) async throws -> String? {
        let secret = Secret.generate()
        let sealed = try secretBox.seal(Array(secret.utf8), context: Self.secretContext(id))
        defer { cache.invalidate(id) }
        let rows = try await database.query(
            """
            UPDATE platforms SET secret_hash = \(Secret.hash(secret)), secret_sealed = \(sealed), updated_at = \(clock.now.epochMilliseconds)
            WHERE id = \(id) RETURNING id
            """)
        return rows.isEmpty ? nil : secret
    }

    /// Deletes a platform that has no devices.
    package func delete(id: UUID) async throws -> DeleteOutcome {
        defer { cache.invalidate(id) }
        return try await database.transaction { connection in
            // Locked first, so that a device registering meanwhile is waited for and found below.
            try await connection.query("SELECT id FROM platforms WHERE id = \(id)\(connection.dialect.rowLock(.update))")
            let devices = try await connection.query("SELECT id FROM devices WHERE platform_id = \(id) LIMIT 1")
            if !devices.isEmpty { return .inUse }
            let deleted = try await connection.query("DELETE FROM platforms WHERE id = \(id) RETURNING id")
            return deleted.isEmpty ? .notFound : .deleted
        }
    }

    // MARK: Helpers

    private func seal(_ credentials: PlatformCredentials, id: UUID) throws -> [UInt8] {
        try secretBox.seal(Array(try JSONEncoder().encode(credentials)), context: Self.credentialsContext(id))
    }

    static func secretContext(_ id: UUID) -> String { "platform-secret:\(id.lowercasedString)" }
    static func credentialsContext(_ id: UUID) -> String { "platform-credentials:\(id.lowercasedString)" }

    static func summaryJSON(_ summary: CredentialsSummary?) throws -> String? {
        guard let summary else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(summary), as: UTF8.self)
    }

    static func platform(_ row: SQLRow) throws -> Platform {
        guard let type = PlatformType(rawValue: try row.string("type")) else {
            throw StoreError.decoding(column: "type", expected: "a platform type")
        }
        let summary = try row.optionalString("credentials_summary").map {
            try JSONDecoder().decode(CredentialsSummary.self, from: Data($0.utf8))
        }
        return Platform(
            id: try row.uuid("id"), applicationID: try row.uuid("app_id"), name: try row.string("name"), type: type,
            credentialsSummary: summary,
            credentialsStatus: CredentialsStatus(rawValue: try row.string("credentials_status")) ?? .failing,
            fcmNotification: try row.int("fcm_notification") != 0, createdAt: try row.int("created_at"),
            updatedAt: try row.int("updated_at"))
    }
}
