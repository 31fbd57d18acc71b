import Crypto
import HeraldCore
import HeraldStore
import _CryptoExtras

import struct Foundation.Data
import class Foundation.JSONSerialization
import struct Foundation.UUID

/// Objects most tests need: a tenant's app with one platform of each type.
package struct Fixture: Sendable {
    package var app: App
    package var apiKey: String
    package var platform: Platform
    package var platformSecret: String

    package init(app: App, apiKey: String, platform: Platform, platformSecret: String) {
        self.app = app
        self.apiKey = apiKey
        self.platform = platform
        self.platformSecret = platformSecret
    }

    /// Creates an app in a new tenant and an iOS platform (token auth) on it.
    package static func make(_ store: Store, type: PlatformType = .ios, tenantName: String? = nil) async throws -> Fixture {
        let tenant = try await store.tenants.create(name: tenantName ?? "tenant-\(UUID().uuidString.prefix(8))")!
        let (app, apiKey) = try await store.applications.create(tenantID: tenant.id, name: "App", description: "test app")
        let (platform, secret) = try await store.platforms.create(
            applicationID: app.id, name: type.rawValue, type: type, credentials: try credentials(for: type))
        return Fixture(app: app, apiKey: apiKey, platform: platform, platformSecret: secret)
    }

    /// Valid throw-away credentials for a platform type.
    package static func credentials(for type: PlatformType) throws -> PlatformCredentials {
        switch type {
        case .ios:
            return try CredentialsInput(
                p8: P256.Signing.PrivateKey().pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ",
                topic: "com.example.app", environment: "sandbox"
            ).validate(for: .ios)
        case .android:
            return try CredentialsInput(serviceAccount: JSONText(serviceAccountJSON())).validate(for: .android)
        case .web:
            return try CredentialsInput(subject: "mailto:ops@example.com").validate(for: .web)
        case .windows:
            return try CredentialsInput(clientID: "ms-app://s-1-15-2-1", clientSecret: "secret").validate(for: .windows)
        }
    }
}

/// A random APNs device token (32 bytes, hex).
package func randomAPNsToken() -> String {
    Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
}

/// A random FCM registration token, shaped like Google's (an instance id, a colon, `APA91b…`).
package func randomFCMToken() -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    func run(_ count: Int) -> String { String((0..<count).map { _ in alphabet.randomElement()! }) }
    return run(22) + ":APA91b" + run(134)
}

/// A Firebase service-account JSON with a freshly generated RSA key.
package func serviceAccountJSON(projectID: String = "demo-project", tokenURI: String = "https://oauth2.googleapis.com/token") throws
    -> String
{
    let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    let object: [String: String] = [
        "type": "service_account",
        "project_id": projectID,
        "private_key_id": "0123456789abcdef",
        "private_key": key.pemRepresentation,
        "client_email": "herald@\(projectID).iam.gserviceaccount.com",
        "token_uri": tokenURI,
    ]
    return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
}
