/// A provider token as every process sending for a platform shares it: the JWT, when it was
/// issued, and which key signed it.
///
/// The token is a bearer credential for the key's whole team: it describes itself without the
/// JWT, and a store keeps it encrypted.
package struct APNsSharedProviderToken: Sendable, Equatable {
    /// The signed JWT, sent as `authorization: bearer <token>`.
    package var token: String
    /// Its `iat` claim, epoch seconds.
    package var issuedAt: Int64
    /// The signing key's `APNsTokenGenerator.fingerprint` (HeraldAPNs): a token signed with other
    /// credentials (replaced since) is not reused.
    package var keyFingerprint: String

    package init(token: String, issuedAt: Int64, keyFingerprint: String) {
        self.token = token
        self.issuedAt = issuedAt
        self.keyFingerprint = keyFingerprint
    }
}

extension APNsSharedProviderToken: RedactingDescription {
    package var description: String { "APNsSharedProviderToken(token: <redacted>, issuedAt: \(issuedAt), key: \(keyFingerprint))" }
}
