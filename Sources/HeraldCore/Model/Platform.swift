import struct Foundation.UUID

/// One delivery channel of an application (an iOS bundle, an Android app, a web origin, a Windows package).
///
/// Devices register with `platform_uuid:platform_secret`.
public struct Platform: Sendable, Equatable {
    public var id: UUID
    public var applicationID: UUID
    public var name: String
    public var type: PlatformType
    /// What can be shown of the credentials: no secret is in it.
    public var credentialsSummary: CredentialsSummary?
    /// Whether the provider last accepted the credentials.
    public var credentialsStatus: CredentialsStatus
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: UUID, applicationID: UUID, name: String, type: PlatformType,
        credentialsSummary: CredentialsSummary?, credentialsStatus: CredentialsStatus,
        createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.applicationID = applicationID
        self.name = name
        self.type = type
        self.credentialsSummary = credentialsSummary
        self.credentialsStatus = credentialsStatus
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// Whether a platform's provider credentials work.
public enum CredentialsStatus: String, Sendable, Codable {
    /// Never rejected by the provider.
    case ok
    /// No credentials uploaded yet: devices may register, nothing is sent.
    case missing
    /// The provider rejected them: sends are paused, devices are kept.
    case failing
}
