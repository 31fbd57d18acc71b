import Crypto
import Foundation
import HeraldCore

/// A browser's push subscription (the W3C Push API's `PushSubscription.toJSON()`): where to
/// send, and the keys to encrypt for.
package struct WebPushSubscription: Sendable, Equatable {
    /// The push resource URL (https).
    package let endpoint: String
    /// `keys.p256dh`: the user agent's P-256 public key, uncompressed (65 bytes).
    package let p256dh: [UInt8]
    /// `keys.auth`: the 16-byte authentication secret.
    package let authSecret: [UInt8]
    let userAgentKey: P256.KeyAgreement.PublicKey

    /// Parses a subscription as a web device registers it (Herald stores it as canonical JSON,
    /// see `RegistrationToken`); the same checks apply, with the same messages.
    ///
    /// This runs once per message sent, so the JSON is decoded once and the key parsed once; only
    /// a subscription that fails goes through `RegistrationToken`'s checks, for their message.
    package init(json: String) throws(ValidationError) {
        guard let stored = try? JSONDecoder().decode(Stored.self, from: Data(json.utf8)),
            stored.endpoint.utf8.count > "https://".utf8.count, stored.endpoint.lowercased().hasPrefix("https://"),
            let p256dh = Base64URL.decode(stored.keys.p256dh), let auth = Base64URL.decode(stored.keys.auth), auth.count == 16,
            let key = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        else {
            _ = try RegistrationToken.normalize(json, for: .web)
            throw ValidationError(code: "invalid_token", message: "the subscription could not be read", field: "registration_token")
        }
        self.endpoint = stored.endpoint
        self.p256dh = p256dh
        self.authSecret = auth
        self.userAgentKey = key
    }

    /// The JSON's shape.
    private struct Stored: Decodable {
        struct Keys: Decodable {
            let p256dh: String
            let auth: String
        }
        let endpoint: String
        let keys: Keys
    }

    /// A subscription from its parts (base64url keys, as in the JSON).
    package init(endpoint: String, p256dh: String, auth: String) throws(ValidationError) {
        let json = JSONValue.object([
            "endpoint": .string(endpoint), "keys": .object(["p256dh": .string(p256dh), "auth": .string(auth)]),
        ]).jsonText
        try self.init(json: json)
    }

    /// The subscription as canonical JSON, as a web device's registration token is stored.
    package var json: String {
        JSONValue.object([
            "endpoint": .string(endpoint),
            "keys": .object(["p256dh": .string(Base64URL.encode(p256dh)), "auth": .string(Base64URL.encode(authSecret))]),
        ]).jsonText
    }

    package static func == (lhs: WebPushSubscription, rhs: WebPushSubscription) -> Bool {
        lhs.endpoint == rhs.endpoint && lhs.p256dh == rhs.p256dh && lhs.authSecret == rhs.authSecret
    }

    /// The origin (`scheme://host[:port]`, the port only when not the scheme's default) of a
    /// URL: the VAPID `aud` for a push resource. Nil unless it is an http(s) URL with a host.
    package static func origin(of url: String) -> String? {
        URLComponents(string: url).flatMap(origin(of:))
    }

    /// The origin of a parsed URL, as `origin(of:)` gives it.
    static func origin(of components: URLComponents) -> String? {
        guard let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", var host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
        let defaultPort = scheme == "https" ? 443 : 80
        if let port = components.port, port != defaultPort {
            return "\(scheme)://\(host):\(port)"
        }
        return "\(scheme)://\(host)"
    }
}
