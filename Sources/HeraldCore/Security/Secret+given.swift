import struct Foundation.UUID

/// Identities an operator brings from another push service (an app's uuid and api key, a
/// platform's uuid and secret), kept so that shipped apps and their backends keep working.
extension Secret {
    /// How long a given secret may be. Herald generates 43 characters (base64url of 32 bytes);
    /// Pivotal's Push service handed out uuids (36 characters). Sixteen characters is the least
    /// that still leaves a secret worth guessing against; 128 bounds what is hashed per request.
    package static let givenLength = 16...128

    /// Checks a secret given on creation: 16 to 128 characters of the URL-safe alphabet
    /// (letters, digits, `-`, `_`, `.`, `~`), which covers Herald's base64url secrets and
    /// Pivotal's uuid-shaped ones, and travels in HTTP Basic credentials and shell arguments
    /// without quoting.
    package static func checkGiven(_ secret: String, field: String) throws(ValidationError) -> String {
        let bytes = Array(secret.utf8)
        guard givenLength.contains(bytes.count) else {
            throw ValidationError(
                message: "must be \(givenLength.lowerBound) to \(givenLength.upperBound) characters, got \(bytes.count)", field: field)
        }
        for byte in bytes where !isGivenSecretCharacter(byte) {
            throw ValidationError(
                message: "may hold only letters, digits, '-', '_', '.' and '~' (found '\(Character(Unicode.Scalar(byte)))')",
                field: field)
        }
        return secret
    }

    /// Checks a uuid given on creation: the canonical `8-4-4-4-12` form in either case, not the
    /// nil uuid. Stored in lower case, as generated ones are.
    package static func checkGivenUUID(_ text: String, field: String) throws(ValidationError) -> UUID {
        guard let id = UUID(text: text) else {
            throw ValidationError(message: "must be a UUID (8-4-4-4-12 hexadecimal digits)", field: field)
        }
        guard id != UUID.nilValue else {
            throw ValidationError(message: "must not be the nil UUID", field: field)
        }
        return id
    }

    private static func isGivenSecretCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}

extension UUID {
    /// `00000000-0000-0000-0000-000000000000`.
    static let nilValue = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
