import Crypto
import _CryptoExtras

/// Signs compact JWTs (RFC 7515/7519): the one signing path for every JWT Herald makes — APNs
/// provider tokens and VAPID tokens (ES256), the FCM service account's assertion (RS256) and
/// signed custom user ids (HS256).
///
/// Hand-written on swift-crypto rather than vapor/jwt-kit (5.8.0 resolves with swift-crypto
/// 4.5.2): jwt-kit 5 signs only through `JWTKeyCollection.sign`, an `async` method of an actor,
/// and fixes the header's members itself, while Herald signs inside synchronous steps (the APNs
/// token state machine's `sign` action, a Web Push message's preparation, the I/O-free custom
/// user id check in Core) and must send exactly the headers APNs and RFC 8292 name. What is
/// hand-written is the compact serialisation only (base64url of two JSON texts and of the
/// signature); the cryptography is swift-crypto's.
package struct JWTSigner: Sendable {
    /// The key, which decides the algorithm.
    package enum Key: Sendable {
        /// ECDSA P-256 with SHA-256; the signature is the raw r‖s (RFC 7518 §3.4).
        case es256(P256.Signing.PrivateKey)
        /// RSASSA-PKCS1-v1_5 with SHA-256.
        case rs256(_RSA.Signing.PrivateKey)
        /// HMAC with SHA-256.
        case hs256(SymmetricKey)
    }

    private let key: Key

    package init(_ key: Key) {
        self.key = key
    }

    /// The `alg` header member.
    package var algorithm: String {
        switch key {
        case .es256: "ES256"
        case .rs256: "RS256"
        case .hs256: "HS256"
        }
    }

    /// `header.claims.signature`: the header is `alg` and `members` (`kid`, `typ`), the claims as given.
    package func sign(claims: JSONValue, header members: [String: JSONValue] = ["typ": .string("JWT")]) throws -> String {
        var header = members
        header["alg"] = .string(algorithm)
        let signingInput =
            Base64URL.encode(Array(JSONValue.object(header).jsonText.utf8)) + "." + Base64URL.encode(Array(claims.jsonText.utf8))
        return signingInput + "." + Base64URL.encode(try signature(for: Array(signingInput.utf8)))
    }

    /// The signature of `signingInput` (`header.claims`, base64url), as the JWS carries it.
    package func signature(for signingInput: [UInt8]) throws -> [UInt8] {
        switch key {
        case .es256(let key):
            Array(try key.signature(for: signingInput).rawRepresentation)
        case .rs256(let key):
            Array(try key.signature(for: signingInput, padding: .insecurePKCS1v1_5).rawRepresentation)
        case .hs256(let key):
            Array(HMAC<SHA256>.authenticationCode(for: signingInput, using: key))
        }
    }
}
