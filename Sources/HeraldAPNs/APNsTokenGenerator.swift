import Crypto
import HeraldCore
import struct Foundation.Data

/// Signs the provider authentication tokens APNs expects with token-based auth: a JWT with
/// header `{"alg":"ES256","kid":<key id>}` and claims `{"iss":<team id>,"iat":<seconds>}`,
/// signed with the .p8 key (ES256, the raw r‖s signature).
public struct APNsTokenGenerator: Sendable {
    public let keyID: String
    public let teamID: String
    private let key: P256.Signing.PrivateKey

    public init(credentials: APNsTokenCredentials) throws {
        self.keyID = credentials.keyID
        self.teamID = credentials.teamID
        self.key = try P256.Signing.PrivateKey(pemRepresentation: credentials.privateKeyPEM)
    }

    /// A token issued at `issuedAt` (epoch seconds).
    public func token(issuedAt: Int64) throws -> String {
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"iss":"\#(teamID)","iat":\#(issuedAt)}"#.utf8))
        let signingInput = header + "." + claims
        let signature = try key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }
}
