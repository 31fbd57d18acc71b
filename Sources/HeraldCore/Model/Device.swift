import struct Foundation.UUID

/// A registered device: one registration token on one platform.
package struct Device: Sendable, Equatable {
    /// Internal, increasing: the key that pages walk.
    package var id: Int64
    package var uuid: UUID
    package var applicationID: UUID
    package var platformID: UUID
    package var platformType: PlatformType
    /// The os the device registered with (`ios`, `android`, `windows8`, `web`…).
    package var os: String
    package var osVersion: String?
    package var deviceAlias: String?
    package var deviceModel: String?
    package var deviceManufacturer: String?
    package var registrationToken: String
    package var customUserID: String?
    /// Lower-case, sorted.
    package var tags: [String]
    /// Whether pushes may target it; the provider's "unregistered" turns it off.
    package var active: Bool
    /// Milliseconds since 1970.
    package var createdAt: Int64
    package var updatedAt: Int64

    package init(
        id: Int64, uuid: UUID, applicationID: UUID, platformID: UUID, platformType: PlatformType,
        os: String, osVersion: String?, deviceAlias: String?, deviceModel: String?, deviceManufacturer: String?,
        registrationToken: String, customUserID: String?, tags: [String], active: Bool,
        createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.uuid = uuid
        self.applicationID = applicationID
        self.platformID = platformID
        self.platformType = platformType
        self.os = os
        self.osVersion = osVersion
        self.deviceAlias = deviceAlias
        self.deviceModel = deviceModel
        self.deviceManufacturer = deviceManufacturer
        self.registrationToken = registrationToken
        self.customUserID = customUserID
        self.tags = tags
        self.active = active
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
