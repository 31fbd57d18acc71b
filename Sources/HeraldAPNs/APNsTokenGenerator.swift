import Crypto
import HeraldCore

import struct Foundation.Data

/// Signs the provider authentication tokens APNs expects with token-based auth: a JWT with
/// header `{"alg":"ES256","kid":<key id>}` and claims `{"iss":<team id>,"iat":<seconds>}`,
/// signed with the .p8 key (ES256, the raw r‖s signature).
package struct APNsTokenGenerator: Sendable {
    package let keyID: String
    package let teamID: String
    /// Names the key, team and key id the tokens are signed for, without revealing the key:
    /// SHA-256 (hex) of the key id, the team id and the public key. A token stored under another
    /// fingerprint was signed with credentials since replaced.
    package let fingerprint: String
    private let signer: JWTSigner

    package init(credentials: APNsTokenCredentials) throws {
        self.keyID = credentials.keyID
        self.teamID = credentials.teamID
        let key = try P256.Signing.PrivateKey(pemRepresentation: credentials.privateKeyPEM)
        var hash = SHA256()
        hash.update(data: Array("\(credentials.keyID)\n\(credentials.teamID)\n".utf8))
        hash.update(data: key.publicKey.x963Representation)
        self.fingerprint = Hex.encode(Array(hash.finalize()))
        self.signer = JWTSigner(.es256(key))
    }

    /// A token issued at `issuedAt` (epoch seconds).
    package func token(issuedAt: Int64) throws -> String {
        try signer.sign(claims: .object(["iss": .string(teamID), "iat": .int(issuedAt)]), header: ["kid": .string(keyID)])
    }
}
