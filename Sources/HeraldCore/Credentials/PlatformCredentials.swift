/// A platform's provider credentials, validated. Stored sealed (see `SecretBox`).
package enum PlatformCredentials: Sendable, Equatable, Codable {
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
    package var platformType: PlatformType {
        switch self {
        case .apnsToken, .apnsCertificate: .ios
        case .fcm: .android
        case .webPush: .web
        case .wns: .windows
        }
    }

    /// What may be shown of them: identifiers, never key material.
    package var summary: CredentialsSummary {
        switch self {
        case .apnsToken(let c):
            CredentialsSummary(
                kind: "apns_token",
                fields: [
                    "key_id": c.keyID, "team_id": c.teamID, "topic": c.topic, "environment": c.environment.rawValue,
                ].merging(c.endpoint.map { ["endpoint": $0] } ?? [:]) { $1 })
        case .apnsCertificate(let c):
            CredentialsSummary(
                kind: "apns_certificate",
                fields: [
                    "topic": c.topic, "environment": c.environment.rawValue,
                ].merging(c.endpoint.map { ["endpoint": $0] } ?? [:]) { $1 })
        case .fcm(let c):
            CredentialsSummary(
                kind: "fcm_service_account",
                fields: [
                    "project_id": c.projectID, "client_email": c.clientEmail,
                ])
        case .webPush(let c):
            CredentialsSummary(
                kind: "vapid",
                fields: [
                    "public_key": c.publicKey, "subject": c.subject,
                ])
        case .wns(let c):
            CredentialsSummary(kind: "wns", fields: ["client_id": c.clientID])
        }
    }
}

/// The displayable part of a platform's credentials.
package struct CredentialsSummary: Sendable, Equatable, Codable {
    package var kind: String
    package var fields: [String: String]

    package init(kind: String, fields: [String: String]) {
        self.kind = kind
        self.fields = fields
    }
}

/// Which APNs servers a platform sends to.
package enum APNsEnvironment: String, Sendable, Codable {
    case production
    case sandbox
}

package struct APNsTokenCredentials: Sendable, Equatable, Codable {
    /// The .p8 key in PEM form.
    package var privateKeyPEM: String
    package var keyID: String
    package var teamID: String
    /// The app's bundle id, sent as `apns-topic`.
    package var topic: String
    package var environment: APNsEnvironment
    /// This platform's APNs endpoint instead of Apple's for `environment` (a proxy, a test server).
    package var endpoint: String?
    /// A CA (PEM) to trust for `endpoint` besides the system's.
    package var extraTrustedCAPEM: String?

    package init(
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

package struct APNsCertificateCredentials: Sendable, Equatable, Codable {
    /// The .p12 bundle.
    package var pkcs12: [UInt8]
    package var password: String
    package var topic: String
    package var environment: APNsEnvironment
    /// This platform's APNs endpoint instead of Apple's for `environment` (a proxy, a test server).
    package var endpoint: String?
    /// A CA (PEM) to trust for `endpoint` besides the system's.
    package var extraTrustedCAPEM: String?

    package init(
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

package struct FCMCredentials: Sendable, Equatable, Codable {
    /// The service-account JSON as uploaded.
    package var serviceAccountJSON: String
    package var projectID: String
    package var clientEmail: String
    package var privateKeyPEM: String
    /// Where the OAuth2 assertion is exchanged for an access token.
    package var tokenURI: String

    package init(serviceAccountJSON: String, projectID: String, clientEmail: String, privateKeyPEM: String, tokenURI: String) {
        self.serviceAccountJSON = serviceAccountJSON
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.privateKeyPEM = privateKeyPEM
        self.tokenURI = tokenURI
    }
}

package struct VAPIDCredentials: Sendable, Equatable, Codable {
    /// The P-256 private key, raw 32 bytes, base64url.
    package var privateKey: String
    /// The uncompressed P-256 public key, base64url: the web app's `applicationServerKey`.
    package var publicKey: String
    /// `mailto:` or `https:` contact, sent as the JWT's `sub`.
    package var subject: String

    package init(privateKey: String, publicKey: String, subject: String) {
        self.privateKey = privateKey
        self.publicKey = publicKey
        self.subject = subject
    }
}

package struct WNSCredentials: Sendable, Equatable, Codable {
    /// The package SID (`ms-app://…`).
    package var clientID: String
    package var clientSecret: String

    package init(clientID: String, clientSecret: String) {
        self.clientID = clientID
        self.clientSecret = clientSecret
    }
}

// MARK: - Descriptions without key material

extension PlatformCredentials: RedactingDescription {
    /// The kind and the ``summary``'s fields; never a key, password or secret.
    package var description: String {
        let summary = self.summary
        let fields = summary.fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return "\(summary.kind)(\(fields.joined(separator: ", ")))"
    }
}

extension APNsTokenCredentials: RedactingDescription {
    package var description: String { PlatformCredentials.apnsToken(self).description }
}

extension APNsCertificateCredentials: RedactingDescription {
    package var description: String { PlatformCredentials.apnsCertificate(self).description }
}

extension FCMCredentials: RedactingDescription {
    package var description: String { PlatformCredentials.fcm(self).description }
}

extension VAPIDCredentials: RedactingDescription {
    package var description: String { PlatformCredentials.webPush(self).description }
}

extension WNSCredentials: RedactingDescription {
    package var description: String { PlatformCredentials.wns(self).description }
}
