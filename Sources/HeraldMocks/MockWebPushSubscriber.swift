import Crypto
import HeraldCore

/// A browser's side of one push subscription, for the mock push service: the user agent's
/// P-256 key pair and auth secret (what `PushManager.subscribe()` makes), so that messages
/// sent to it can be decrypted.
package struct MockWebPushSubscriber: Sendable {
    /// The last path segment of the endpoint (`/push/<id>`).
    package let id: String
    /// The user agent's key; its public half is `keys.p256dh`.
    package let privateKey: P256.KeyAgreement.PrivateKey
    /// `keys.auth`.
    package let authSecret: [UInt8]
    /// The VAPID public key (base64url) the subscription was made with, as a web app passes
    /// `applicationServerKey`: the push service then takes messages signed with that key only.
    package let applicationServerKey: String?

    package init(
        id: String? = nil, privateKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(), authSecret: [UInt8]? = nil,
        applicationServerKey: String? = nil
    ) {
        self.id = id ?? Base64URL.encode(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
        self.privateKey = privateKey
        self.authSecret = authSecret ?? SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }
        self.applicationServerKey = applicationServerKey
    }

    /// `keys.p256dh`: the uncompressed public key, base64url.
    package var p256dh: String { Base64URL.encode(Array(privateKey.publicKey.x963Representation)) }

    /// `keys.auth`, base64url.
    package var auth: String { Base64URL.encode(authSecret) }

    /// The push resource at a push service's origin.
    package func endpoint(origin: String) -> String { "\(origin)/push/\(id)" }

    /// The subscription JSON a browser hands the web app (`PushSubscription.toJSON()`), which
    /// the web app registers with Herald as the registration token.
    package func subscriptionJSON(origin: String) -> String {
        JSONValue.object([
            "endpoint": .string(endpoint(origin: origin)),
            "keys": .object(["p256dh": .string(p256dh), "auth": .string(auth)]),
        ]).jsonText
    }
}
