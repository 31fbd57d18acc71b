/// A platform's provider credentials, validated. Stored sealed (see `SecretBox`).
public enum PlatformCredentials: Sendable, Equatable, Codable {
    /// APNs token-based auth: a .p8 signing key.
    case apnsToken(APNsTokenCredentials)
    /// APNs certificate-based auth: a .p12 bundle with its password.
    case apnsCertificate(APNsCertificateCredentials)
    /// FCM HTTP v1 with a Google service account.
    case fcm(FCMCredentials)
    /// Web Push with a VAPID key pair.
    case webPush(VAPIDCredentials)
    /// WNS with the package SID and secret.
    case wns(WNSCredentials)

    /// The platform type these credentials are for.
    public var platformType: PlatformType {
        switch self {
        case .apnsToken, .apnsCertificate: .ios
        case .fcm: .android
        case .webPush: .web
        case .wns: .windows
        }
    }

    /// What may be shown of them: identifiers, never key material.
    public var summary: CredentialsSummary {
        switch self {
        case .apnsToken(let c):
            CredentialsSummary(kind: "apns_token", fields: [
                "key_id": c.keyID, "team_id": c.teamID, "topic": c.topic, "environment": c.environment.rawValue,
            ].merging(c.endpoint.map { ["endpoint": $0] } ?? [:]) { $1 })
        case .apnsCertificate(let c):
            CredentialsSummary(kind: "apns_certificate", fields: [
                "topic": c.topic, "environment": c.environment.rawValue,
            ].merging(c.endpoint.map { ["endpoint": $0] } ?? [:]) { $1 })
        case .fcm(let c):
            CredentialsSummary(kind: "fcm_service_account", fields: [
                "project_id": c.projectID, "client_email": c.clientEmail,
            ])
        case .webPush(let c):
            CredentialsSummary(kind: "vapid", fields: [
                "public_key": c.publicKey, "subject": c.subject,
            ])
        case .wns(let c):
            CredentialsSummary(kind: "wns", fields: ["client_id": c.clientID])
        }
    }
}

/// The displayable part of a platform's credentials.
public struct CredentialsSummary: Sendable, Equatable, Codable {
    public var kind: String
    public var fields: [String: String]

    public init(kind: String, fields: [String: String]) {
        self.kind = kind
        self.fields = fields
    }
}

/// Which APNs servers a platform sends to.
public enum APNsEnvironment: String, Sendable, Codable {
    case production
    case sandbox
}

public struct APNsTokenCredentials: Sendable, Equatable, Codable {
    /// The .p8 key in PEM form.
    public var privateKeyPEM: String
    public var keyID: String
    public var teamID: String
    /// The app's bundle id, sent as `apns-topic`.
    public var topic: String
    public var environment: APNsEnvironment
    /// This platform's APNs endpoint instead of Apple's for `environment` (a proxy, a test server).
    public var endpoint: String?
    /// A CA (PEM) to trust for `endpoint` besides the system's.
    public var extraTrustedCAPEM: String?

    public init(
        privateKeyPEM: String, keyID: String, teamID: String, topic: String, environment: APNsEnvironment, endpoint: String? = nil,
        extraTrustedCAPEM: String? = nil
    ) {
        self.privateKeyPEM = privateKeyPEM
        self.keyID = keyID
        self.teamID = teamID
        self.topic = topic
        self.environment = environment
        self.endpoint = endpoint
        self.extraTrustedCAPEM = extraTrustedCAPEM
    }
}

public struct APNsCertificateCredentials: Sendable, Equatable, Codable {
    /// The .p12 bundle.
    public var pkcs12: [UInt8]
    public var password: String
    public var topic: String
    public var environment: APNsEnvironment
    /// This platform's APNs endpoint instead of Apple's for `environment` (a proxy, a test server).
    public var endpoint: String?
    /// A CA (PEM) to trust for `endpoint` besides the system's.
    public var extraTrustedCAPEM: String?

    public init(
        pkcs12: [UInt8], password: String, topic: String, environment: APNsEnvironment, endpoint: String? = nil,
        extraTrustedCAPEM: String? = nil
    ) {
        self.pkcs12 = pkcs12
        self.password = password
        self.topic = topic
        self.environment = environment
        self.endpoint = endpoint
        self.extraTrustedCAPEM = extraTrustedCAPEM
    }
}

public struct FCMCredentials: Sendable, Equatable, Codable {
    /// The service-account JSON as uploaded.
    public var serviceAccountJSON: String
    public var projectID: String
    public var clientEmail: String
    public var privateKeyPEM: String
    /// Where the OAuth2 assertion is exchanged for an access token.
    public var tokenURI: String

    public init(serviceAccountJSON: String, projectID: String, clientEmail: String, privateKeyPEM: String, tokenURI: String) {
        self.serviceAccountJSON = serviceAccountJSON
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyPEM = privateKeyPEM
        self.tokenURI = tokenURI
    }
}

public struct VAPIDCredentials: Sendable, Equatable, Codable {
    /// The P-256 private key, raw 32 bytes, base64url.
    public var privateKey: String
    /// The uncompressed P-256 public key, base64url: the web app's `applicationServerKey`.
    public var publicKey: String
    /// `mailto:` or `https:` contact, sent as the JWT's `sub`.
    public var subject: String

    public init(privateKey: String, publicKey: String, subject: String) {
        self.privateKey = privateKey
        self.publicKey = publicKey
        self.subject = subject
    }
}

public struct WNSCredentials: Sendable, Equatable, Codable {
    /// The package SID (`ms-app://…`).
    public var clientID: String
    public var clientSecret: String

    public init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }
}

// MARK: - Descriptions without key material

extension PlatformCredentials: RedactingDescription {
    /// The kind and the ``summary``'s fields; never a key, password or secret.
    public var description: String {
        let summary = self.summary
        let fields = summary.fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return "\(summary.kind)(\(fields.joined(separator: ", ")))"
    }
}

extension APNsTokenCredentials: RedactingDescription {
    public var description: String { PlatformCredentials.apnsToken(self).description }
}

extension APNsCertificateCredentials: RedactingDescription {
    public var description: String { PlatformCredentials.apnsCertificate(self).description }
}

extension FCMCredentials: RedactingDescription {
    public var description: String { PlatformCredentials.fcm(self).description }
}

extension VAPIDCredentials: RedactingDescription {
    public var description: String { PlatformCredentials.webPush(self).description }
}

extension WNSCredentials: RedactingDescription {
    public var description: String { PlatformCredentials.wns(self).description }
}
