import struct Foundation.UUID

/// One line of a device import (NDJSON), in the shape the export writes: the registration
/// fields a device sends (`os`, `registration_token`, `tags`, …, read by `RegistrationInput`)
/// and what only an export knows: `device_uuid`, `platform_uuid`, `active` and the times.
package struct DeviceImportLine: Sendable, Decodable {
    package var deviceUUID: String?
    package var platformUUID: String?
    /// The registration fields, checked by the registration's own rules.
    package var registration: RegistrationInput
    package var active: Bool?
    package var createdAt: Int64?
    package var updatedAt: Int64?

    enum CodingKeys: String, CodingKey {
        case deviceUUID = "device_uuid"
        case platformUUID = "platform_uuid"
        case active
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    package init(
        deviceUUID: String? = nil, platformUUID: String? = nil, registration: RegistrationInput = RegistrationInput(), active: Bool? = nil,
        createdAt: Int64? = nil, updatedAt: Int64? = nil
    ) {
        self.deviceUUID = deviceUUID
        self.platformUUID = platformUUID
        self.registration = registration
        self.active = active
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        deviceUUID = try container.decodeIfPresent(String.self, forKey: .deviceUUID)
        platformUUID = try container.decodeIfPresent(String.self, forKey: .platformUUID)
        active = try container.decodeIfPresent(Bool.self, forKey: .active)
        createdAt = try container.decodeIfPresent(Int64.self, forKey: .createdAt)
        updatedAt = try container.decodeIfPresent(Int64.self, forKey: .updatedAt)
        registration = try RegistrationInput(from: decoder)
    }

    /// Checks the line for an application whose platforms are `platforms`, by the rules a
    /// registration meets (`RegistrationInput.validated(for:requireToken:)`, the time zone, WNS
    /// channel hosts), plus the import's own: a uuid, a platform of this application, tags as a
    /// list, times not negative, a badge count as a registration gives it.
    ///
    /// - Parameters:
    ///   - now: epoch ms, the times of a line that gives none.
    ///   - wnsTestHost: a WNS channel host accepted besides Microsoft's (a test WNS).
    package func validated(platforms: [UUID: Platform], now: Int64, wnsTestHost: String? = nil) throws(ValidationError) -> DeviceImport {
        guard let rawUUID = deviceUUID else {
            throw ValidationError(
                code: "missing_field", message: "device_uuid is required: an import keeps each device's uuid", field: "device_uuid")
        }
        guard let uuid = UUID(text: rawUUID) else {
            throw ValidationError(message: "must be a UUID", field: "device_uuid")
        }
        guard let rawPlatform = platformUUID else {
            throw ValidationError(code: "missing_field", message: "platform_uuid is required", field: "platform_uuid")
        }
        guard let platformID = UUID(text: rawPlatform), let platform = platforms[platformID] else {
            throw ValidationError(
                code: "unknown_platform",
                message: "'\(rawPlatform)' is not a platform of this application (create it first, with its uuid)",
                field: "platform_uuid")
        }
        if case .delta = registration.tags {
            throw ValidationError(message: "tags must be the device's list of tags", field: "tags")
        }
        var checked = try registration.validated(for: platform.type, requireToken: true)
        checked.timeZone = try registration.validatedTimeZone()
        let quietTime = try registration.validatedQuietTime().applied(to: nil)
        if platform.type == .windows, let channel = checked.registrationToken {
            _ = try WNSChannel.check(channel, allowedTestHost: wnsTestHost)
        }
        for (value, field) in [(createdAt, "created_at"), (updatedAt, "updated_at")] {
            if let value, value < 0 {
                throw ValidationError(message: "must be epoch milliseconds, not negative", field: field)
            }
        }
        let badge = try registration.validatedBadge() ?? 0
        let created = createdAt ?? updatedAt ?? now
        return DeviceImport(
            uuid: uuid, platform: platform, registration: checked, active: active ?? true, createdAt: created,
            updatedAt: updatedAt ?? max(created, now), quietTime: quietTime, badge: badge)
    }
}

/// A device to import, checked: stored with its uuid, as it was exported.
package struct DeviceImport: Sendable, Equatable {
    package var uuid: UUID
    package var platform: Platform
    /// The registration, normalised (token, tags, time zone) for the platform; a token is present.
    package var registration: Registration
    package var active: Bool
    /// Epoch milliseconds.
    package var createdAt: Int64
    package var updatedAt: Int64
    /// The device's quiet time (`quiet_time`); nil for none.
    package var quietTime: QuietTime?
    /// The number the app's icon shows (autobadge); a line without one stores 0, as a line
    /// without any other field stores none.
    package var badge: Int64

    package init(
        uuid: UUID, platform: Platform, registration: Registration, active: Bool, createdAt: Int64, updatedAt: Int64,
        quietTime: QuietTime? = nil, badge: Int64 = 0
    ) {
        self.uuid = uuid
        self.platform = platform
        self.registration = registration
        self.active = active
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.quietTime = quietTime
        self.badge = badge
    }

    /// The device's tags (lower-cased, without duplicates).
    package var tags: [String] {
        if case .replace(let tags) = registration.tags { return tags }
        return []
    }
}
