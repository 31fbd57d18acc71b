import Crypto
import HeraldCore

/// Signs VAPID tokens (RFC 8292 §2): a JWT with header `{"alg":"ES256","typ":"JWT"}` and claims
/// `{"aud":<push service origin>,"exp":<seconds>,"sub":<contact>}`, signed with the platform's
/// VAPID key (ES256, the raw r‖s signature).
package struct VAPIDTokenGenerator: Sendable {
    /// The uncompressed public key, base64url: the `k` parameter, and the web app's `applicationServerKey`.
    package let publicKey: String
    /// The `sub` claim: a `mailto:` or `https:` contact.
    package let subject: String
    private let signer: JWTSigner

    /// The public key is derived from the private key, so a stale stored public key cannot be sent.
    package init(credentials: VAPIDCredentials) throws {
        guard let raw = Base64URL.decode(credentials.privateKey), raw.count == 32 else {
            throw WebPushError.invalidKey("the VAPID private key is not 32 bytes of base64url")
        }
        let key = try P256.Signing.PrivateKey(rawRepresentation: raw)
        self.signer = JWTSigner(.es256(key))
        self.publicKey = Base64URL.encode(Array(key.publicKey.x963Representation))
        self.subject = credentials.subject
    }

    /// A token for `audience` (an origin) that expires at `expiresAt` (epoch seconds).
    package func token(audience: String, expiresAt: Int64) throws -> String {
        try signer.sign(claims: .object(["aud": .string(audience), "exp": .int(expiresAt), "sub": .string(subject)]))
    }

    /// The `Authorization` header value for a token (RFC 8292 §3).
    package func authorization(token: String) -> String {
        "vapid t=\(token), k=\(publicKey)"
    }
}
