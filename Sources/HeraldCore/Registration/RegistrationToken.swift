import Crypto

import struct Foundation.Data
import class Foundation.JSONSerialization
import struct Foundation.URL

/// Checks and normalises the registration token a device sends, per platform.
package enum RegistrationToken {
    /// The token as Herald stores and compares it.
    ///
    /// - ios: the APNs device token in hex (the iOS SDK sends upper case); stored lower case.
    /// - android: the FCM token, as is.
    /// - web: the browser's PushSubscription JSON; stored as canonical JSON.
    /// - windows: the WNS channel URI.
    package static func normalize(_ raw: String, for type: PlatformType, field: String = "registration_token") throws(ValidationError)
        -> String
    {
        let token = raw.trimmingASCIIWhitespace()
        guard !token.isEmpty else {
            throw ValidationError(code: "invalid_token", message: "registration_token must not be empty", field: field)
        }
        guard token.utf8.count <= Limits.registrationTokenLength else {
            throw ValidationError(
                code: "invalid_token", message: "registration_token is longer than \(Limits.registrationTokenLength) bytes", field: field)
        }
        switch type {
        case .ios:
            guard token.utf8.count % 2 == 0, token.utf8.count <= 400, Hex.decode(token) != nil else {
                throw ValidationError(
                    code: "invalid_token",
                    message: "an APNs device token is an even number of hexadecimal digits (no spaces or brackets)",
                    field: field)
            }
            return token.lowercased()
        case .android:
            guard token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                throw ValidationError(
                    code: "invalid_token", message: "an FCM registration token is printable ASCII without spaces", field: field)
            }
            return token
        case .web:
            return try webSubscription(token, field: field)
        case .windows:
            guard let url = URL(string: token), url.scheme == "https", let host = url.host, !host.isEmpty else {
                throw ValidationError(code: "invalid_token", message: "a WNS channel URI is an https URL", field: field)
            }
            return token
        }
    }

    /// Validates a PushSubscription (`{"endpoint":…,"keys":{"p256dh":…,"auth":…}}`) and re-encodes it canonically.
    static func webSubscription(_ token: String, field: String) throws(ValidationError) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(token.utf8)) as? [String: Any] else {
            throw ValidationError(
                code: "invalid_token",
                message:
                    "a web registration_token is the browser's PushSubscription as JSON: {\"endpoint\":…,\"keys\":{\"p256dh\":…,\"auth\":…}}",
                field: field)
        }
        guard let endpoint = object["endpoint"] as? String, let url = URL(string: endpoint), url.scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw ValidationError(
                code: "invalid_token", message: "the subscription's endpoint must be an https URL", field: "\(field).endpoint")
        }
        let keys = object["keys"] as? [String: Any] ?? [:]
        guard let p256dh = keys["p256dh"] as? String, let point = Base64URL.decode(p256dh),
            (try? P256.KeyAgreement.PublicKey(x963Representation: point)) != nil
        else {
            throw ValidationError(
                code: "invalid_token", message: "keys.p256dh must be an uncompressed P-256 public key, base64url",
                field: "\(field).keys.p256dh")
        }
        guard let auth = keys["auth"] as? String, let secret = Base64URL.decode(auth), secret.count == 16 else {
            throw ValidationError(
                code: "invalid_token", message: "keys.auth must be a 16-byte secret, base64url", field: "\(field).keys.auth")
        }
        let canonical: [String: Any] = [
            "endpoint": endpoint,
            "keys": ["p256dh": Base64URL.encode(point), "auth": Base64URL.encode(secret)],
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: canonical, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw ValidationError(code: "invalid_token", message: "the subscription could not be encoded", field: field)
        }
        return String(decoding: data, as: UTF8.self)
    }
}
