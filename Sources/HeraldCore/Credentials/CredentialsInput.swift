import Crypto
import NIOSSL
import _CryptoExtras

import struct Foundation.Data
import class Foundation.JSONSerialization
import struct Foundation.URL

/// Credentials as the admin API receives them; `validate(for:)` checks them
/// the way the provider would and yields `PlatformCredentials`.
package struct CredentialsInput: Sendable, Codable, Equatable {
    // APNs
    package var p8: String?
    package var keyID: String?
    package var teamID: String?
    /// base64 of the .p12 file.
    package var p12: String?
    package var password: String?
    package var topic: String?
    package var environment: String?
    // FCM: the service-account JSON, as an object or as a string.
    package var serviceAccount: JSONText?
    /// A legacy FCM (GCM) server key: read only to explain that Google retired it.
    package var serverKey: String?
    // Web Push
    package var subject: String?
    package var vapidPrivateKey: String?
    // WNS
    package var clientID: String?
    package var clientSecret: String?
    /// iOS: an APNs endpoint for this platform instead of Apple's (a proxy, a test server).
    package var endpoint: String?
    /// iOS: a CA (PEM) to trust for this platform's endpoint besides the system's.
    package var extraCAPEM: String?

    enum CodingKeys: String, CodingKey {
        case p8
        case keyID = "key_id"
        case teamID = "team_id"
        case p12
        case password
        case topic
        case environment
        case serviceAccount = "service_account"
        case serverKey = "server_key"
        case subject
        case vapidPrivateKey = "vapid_private_key"
        case clientID = "client_id"
        case clientSecret = "client_secret"
        case endpoint
        case extraCAPEM = "extra_ca_pem"
    }

    package init(
        p8: String? = nil, keyID: String? = nil, teamID: String? = nil, p12: String? = nil, password: String? = nil,
        topic: String? = nil, environment: String? = nil, serviceAccount: JSONText? = nil, subject: String? = nil,
        vapidPrivateKey: String? = nil, clientID: String? = nil, clientSecret: String? = nil
    ) {
        self.p8 = p8
        self.keyID = keyID
        self.teamID = teamID
        self.p12 = p12
        self.password = password
        self.topic = topic
        self.environment = environment
        self.serviceAccount = serviceAccount
        self.subject = subject
        self.vapidPrivateKey = vapidPrivateKey
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    /// Checks the credentials for a platform of `type`; errors name the field under `prefix`.
    package func validate(for type: PlatformType, prefix: String = "credentials") throws(ValidationError) -> PlatformCredentials {
        func field(_ name: String) -> String { "\(prefix).\(name)" }
        func required(_ value: String?, _ name: String) throws(ValidationError) -> String {
            guard let value, !value.trimmingASCIIWhitespace().isEmpty else {
                throw ValidationError(code: "missing_field", message: "\(name) is required", field: field(name))
            }
            return value.trimmingASCIIWhitespace()
        }

        switch type {
        case .ios:
            let topic = try required(topic, "topic")
            guard topic.isVisibleASCII else {
                throw ValidationError(
                    message: "topic is the app's bundle id: ASCII letters, digits and punctuation, no spaces", field: field("topic"))
            }
            let environment = try Self.apnsEnvironment(environment, field: field("environment"))
            let (endpoint, extraCAPEM) = try Self.apnsConnection(endpoint, extraCAPEM, field: field)
            if let p8 {
                guard p12 == nil else {
                    throw ValidationError(message: "give either p8 (token auth) or p12 (certificate auth), not both", field: field("p12"))
                }
                do {
                    _ = try P256.Signing.PrivateKey(pemRepresentation: p8)
                } catch {
                    throw ValidationError(
                        code: "invalid_credentials",
                        message: "p8 is not a PEM-encoded P-256 private key (the .p8 file from Apple)",
                        field: field("p8"))
                }
                let keyID = try required(keyID, "key_id")
                let teamID = try required(teamID, "team_id")
                try Self.appleIdentifier(keyID, field: field("key_id"))
                try Self.appleIdentifier(teamID, field: field("team_id"))
                return .apnsToken(
                    APNsTokenCredentials(
                        privateKeyPEM: p8, keyID: keyID, teamID: teamID, topic: topic, environment: environment, endpoint: endpoint,
                        extraTrustedCAPEM: extraCAPEM))
            } else if let p12 {
                guard let bytes = Base64URL.decode(p12.trimmingASCIIWhitespace()), !bytes.isEmpty else {
                    throw ValidationError(
                        code: "invalid_credentials", message: "p12 must be the .p12 file, base64 encoded", field: field("p12"))
                }
                let password = password ?? ""
                do {
                    let bundle = try NIOSSLPKCS12Bundle(buffer: bytes, passphrase: Array(password.utf8))
                    guard !bundle.certificateChain.isEmpty else {
                        throw ValidationError(code: "invalid_credentials", message: "the .p12 holds no certificate", field: field("p12"))
                    }
                } catch let error as ValidationError {
                    throw error
                } catch {
                    throw ValidationError(
                        code: "invalid_credentials",
                        message: "the .p12 could not be opened: the password is wrong or the file is not a PKCS#12 bundle",
                        field: field("password"))
                }
                return .apnsCertificate(
                    APNsCertificateCredentials(
                        pkcs12: bytes, password: password, topic: topic, environment: environment, endpoint: endpoint,
                        extraTrustedCAPEM: extraCAPEM))
            } else {
                throw ValidationError(
                    code: "missing_field",
                    message: "an iOS platform needs p8 (with key_id and team_id) or p12 (with password)",
                    field: field("p8"))
            }

        case .android:
            if serviceAccount == nil, serverKey != nil {
                throw ValidationError(
                    code: "platform_retired",
                    message:
                        "Google shut down FCM's legacy API and its server keys (GCM) in 2024; upload the Firebase service-account JSON as service_account (Firebase console: Project settings → Service accounts)",
                    field: field("server_key"))
            }
            guard let serviceAccount else {
                throw ValidationError(
                    code: "missing_field", message: "service_account (the Firebase service-account JSON) is required",
                    field: field("service_account"))
            }
            return .fcm(try Self.serviceAccount(serviceAccount.text, field: field("service_account")))

        case .web:
            let subject = try required(subject, "subject")
            guard subject.hasPrefix("mailto:") || subject.hasPrefix("https://") else {
                throw ValidationError(message: "subject must be a mailto: or https: URL (RFC 8292)", field: field("subject"))
            }
            let key: P256.Signing.PrivateKey
            if let vapidPrivateKey {
                guard let raw = Base64URL.decode(vapidPrivateKey.trimmingASCIIWhitespace()), raw.count == 32,
                    let parsed = try? P256.Signing.PrivateKey(rawRepresentation: raw)
                else {
                    throw ValidationError(
                        code: "invalid_credentials",
                        message: "vapid_private_key must be a raw P-256 private key (32 bytes, base64url)",
                        field: field("vapid_private_key"))
                }
                key = parsed
            } else {
                key = P256.Signing.PrivateKey()
            }
            return .webPush(
                VAPIDCredentials(
                    privateKey: Base64URL.encode(Array(key.rawRepresentation)),
                    publicKey: Base64URL.encode(Array(key.publicKey.x963Representation)),
                    subject: subject))

        case .windows:
            let clientID = try required(clientID, "client_id")
            let clientSecret = try required(clientSecret, "client_secret")
            return .wns(WNSCredentials(clientID: clientID, clientSecret: clientSecret))
        }
    }

    // MARK: Helpers

    /// The per-platform APNs endpoint (an https URL) and extra CA (PEM certificates), checked.
    static func apnsConnection(
        _ endpoint: String?, _ extraCAPEM: String?, field: (String) -> String
    ) throws(ValidationError) -> (String?, String?) {
        var checkedEndpoint: String?
        if let endpoint = endpoint?.trimmingASCIIWhitespace(), !endpoint.isEmpty {
            guard let url = URL(string: endpoint), url.scheme == "https", let host = url.host, !host.isEmpty,
                url.path.isEmpty || url.path == "/", url.query == nil
            else {
                throw ValidationError(
                    message: "endpoint must be an https origin such as https://api.push.apple.com or https://apns-proxy.internal:8443",
                    field: field("endpoint"))
            }
            checkedEndpoint = endpoint
        }
        var checkedCA: String?
        if let extraCAPEM, !extraCAPEM.trimmingASCIIWhitespace().isEmpty {
            guard let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(extraCAPEM.utf8)), !certificates.isEmpty else {
                throw ValidationError(
                    code: "invalid_credentials", message: "extra_ca_pem must hold PEM certificates (-----BEGIN CERTIFICATE-----)",
                    field: field("extra_ca_pem"))
            }
            checkedCA = extraCAPEM
        }
        return (checkedEndpoint, checkedCA)
    }

    static func apnsEnvironment(_ raw: String?, field: String) throws(ValidationError) -> APNsEnvironment {
        switch raw?.lowercased() {
        case nil, "production": return .production
        case "sandbox", "development": return .sandbox
        case let other?:
            throw ValidationError(message: "environment must be production or sandbox, not '\(other)'", field: field)
        }
    }

    static func appleIdentifier(_ value: String, field: String) throws(ValidationError) {
        let valid = value.utf8.count == 10 && value.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) }
        guard valid else {
            throw ValidationError(message: "must be Apple's 10-character identifier (A–Z, 0–9)", field: field)
        }
    }

    static func serviceAccount(_ text: String, field: String) throws(ValidationError) -> FCMCredentials {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw ValidationError(code: "invalid_credentials", message: "the service account is not a JSON object", field: field)
        }
        func string(_ key: String) throws(ValidationError) -> String {
            guard let value = object[key] as? String, !value.isEmpty else {
                throw ValidationError(
                    code: "invalid_credentials", message: "the service-account JSON has no \(key)", field: "\(field).\(key)")
            }
            return value
        }
        guard (object["type"] as? String) == "service_account" else {
            throw ValidationError(
                code: "invalid_credentials",
                message: "type must be \"service_account\" (download it from Firebase: Project settings → Service accounts)",
                field: "\(field).type")
        }
        let projectID = try string("project_id")
        let clientEmail = try string("client_email")
        let privateKey = try string("private_key")
        let tokenURI = (object["token_uri"] as? String) ?? "https://oauth2.googleapis.com/token"
        do {
            _ = try _RSA.Signing.PrivateKey(pemRepresentation: privateKey)
        } catch {
            throw ValidationError(
                code: "invalid_credentials", message: "private_key is not a PEM-encoded RSA private key", field: "\(field).private_key")
        }
        guard tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw ValidationError(code: "invalid_credentials", message: "token_uri must be an http(s) URL", field: "\(field).token_uri")
        }
        return FCMCredentials(
            serviceAccountJSON: text, projectID: projectID, clientEmail: clientEmail,
            privateKeyPEM: privateKey, tokenURI: tokenURI)
    }
}

extension CredentialsInput: RedactingDescription {
    /// The identifiers as given; keys, passwords, secrets and the service account only as set or not.
    package var description: String {
        let shown: [(String, String?)] = [
            ("key_id", keyID), ("team_id", teamID), ("topic", topic), ("environment", environment), ("subject", subject),
            ("client_id", clientID), ("endpoint", endpoint),
        ]
        let hidden: [(String, String?)] = [
            ("p8", p8), ("p12", p12), ("password", password), ("service_account", serviceAccount.map { _ in "" }),
            ("server_key", serverKey), ("vapid_private_key", vapidPrivateKey), ("client_secret", clientSecret),
        ]
        let fields =
            shown.compactMap { name, value in value.map { "\(name): \($0)" } }
            + hidden.compactMap { name, value in value.map { "\(name): \(secretPlaceholder($0))" } }
        return "CredentialsInput(\(fields.joined(separator: ", ")))"
    }
}
