import HeraldCore
import _CryptoExtras

/// Signs the JWT a Google service account exchanges for an access token (OAuth2 JWT bearer
/// grant, RFC 7523): header `{"alg":"RS256","typ":"JWT"}`, claims `iss` (the account's
/// `client_email`), `scope` (FCM's), `aud` (the JSON's `token_uri`), `iat` and `exp` an hour
/// later, signed RSASSA-PKCS1-v1_5 with SHA-256 by the account's private key.
package struct FCMAssertionSigner: Sendable {
    /// The OAuth2 scope that allows sending with FCM.
    package static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// How long an assertion is valid: Google's maximum, one hour (seconds).
    package static let lifetime: Int64 = 3600

    /// The `iss`: the service account's `client_email`.
    package let clientEmail: String
    /// The `aud`, and where the assertion is exchanged: the service account's `token_uri`.
    package let tokenURI: String
    private let signer: JWTSigner

    package init(credentials: FCMCredentials) throws {
        self.clientEmail = credentials.clientEmail
        self.tokenURI = credentials.tokenURI
        self.signer = JWTSigner(.rs256(try _RSA.Signing.PrivateKey(pemRepresentation: credentials.privateKeyPEM)))
    }

    /// An assertion issued at `issuedAt` (epoch seconds).
    package func assertion(issuedAt: Int64) throws -> String {
        let claims = JSONValue.object([
            "iss": .string(clientEmail),
            "scope": .string(Self.scope),
            "aud": .string(tokenURI),
            "iat": .int(issuedAt),
            "exp": .int(issuedAt + Self.lifetime),
        ])
        return try signer.sign(claims: claims)
    }
}
