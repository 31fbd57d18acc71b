import struct Foundation.UUID

/// One delivery channel of an application (an iOS bundle, an Android app, a web origin, a Windows package).
///
/// Devices register with `platform_uuid:platform_secret`.
package struct Platform: Sendable, Equatable {
    package var id: UUID
    package var applicationID: UUID
    package var name: String
    package var type: PlatformType
    /// What can be shown of the credentials: no secret is in it.
    package var credentialsSummary: CredentialsSummary?
    /// Whether the provider last accepted the credentials.
    package var credentialsStatus: CredentialsStatus
    /// Android: whether FCM messages carry a `notification` block built from the push's body, which
    /// Android shows by itself while the app is in the background (so the app's messaging service,
    /// the PCF SDK's, never sees the message). False: data messages only, as Pivotal sent them and
    /// as the PCF Android SDK needs (see docs/PLATFORMS.md).
    package var fcmNotification: Bool
    /// Milliseconds since 1970.
    package var createdAt: Int64
    package var updatedAt: Int64

    package init(
        id: UUID, applicationID: UUID, name: String, type: PlatformType,
        credentialsSummary: CredentialsSummary?, credentialsStatus: CredentialsStatus, fcmNotification: Bool = false,
        createdAt: Int64, updatedAt: Int64
    ) {
        self.fcmNotification = fcmNotification
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
package enum CredentialsStatus: String, Sendable, Codable {
    /// Never rejected by the provider.
    case ok
    /// No credentials uploaded yet: devices may register, nothing is sent.
    case missing
    /// The provider rejected them: sends are paused, devices are kept.
    case failing
}
