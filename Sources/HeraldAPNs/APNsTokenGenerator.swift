import Crypto
import HeraldCore
import struct Foundation.Data

/// Signs the provider authentication tokens APNs expects with token-based auth: a JWT with
/// header `{"alg":"ES256","kid":<key id>}` and claims `{"iss":<team id>,"iat":<seconds>}`,
/// signed with the .p8 key (ES256, the raw r‖s signature).
public struct APNsTokenGenerator: Sendable {
    public let keyID: String
    public let teamID: String
    private let signer: JWTSigner

    public init(credentials: APNsTokenCredentials) throws {
        self.keyID = credentials.keyID
        self.teamID = credentials.teamID
        self.signer = JWTSigner(.es256(try P256.Signing.PrivateKey(pemRepresentation: credentials.privateKeyPEM)))
    }

    /// A token issued at `issuedAt` (epoch seconds).
    public func token(issuedAt: Int64) throws -> String {
        try signer.sign(claims: .object(["iss": .string(teamID), "iat": .int(issuedAt)]), header: ["kid": .string(keyID)])
    }
}
