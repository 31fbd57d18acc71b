import struct Foundation.UUID

/// A registered device: one registration token on one platform.
public struct Device: Sendable, Equatable {
    /// Internal, increasing: the key that pages walk.
    public var id: Int64
    public var uuid: UUID
    public var applicationID: UUID
    public var platformID: UUID
    public var platformType: PlatformType
    /// The os the device registered with (`ios`, `android`, `windows8`, `web`…).
    public var os: String
    public var osVersion: String?
    public var deviceAlias: String?
    public var deviceModel: String?
    public var deviceManufacturer: String?
    public var registrationToken: String
    public var customUserID: String?
    /// Lower-case, sorted.
    public var tags: [String]
    /// Whether pushes may target it; the provider's "unregistered" turns it off.
    public var active: Bool
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
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
