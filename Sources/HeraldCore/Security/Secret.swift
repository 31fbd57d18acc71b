import Crypto

/// Generation, hashing and constant-time comparison of bearer secrets
/// (api keys, platform secrets, admin tokens).
///
/// Secrets are 256 random bits; the store keeps only their SHA-256, which is
/// enough for values of that entropy (no password stretching is needed).
package enum Secret {
    /// A new random secret: 32 bytes from the system CSPRNG, base64url without padding (43
    /// characters), never starting with `-` (a command line would take it for an option; drawing
    /// again costs a 64th of the time and log2(64/63), about 0.02, of the 256 bits).
    package static func generate() -> String {
        while true {
            let key = SymmetricKey(size: .bits256)
            let secret = key.withUnsafeBytes { Base64URL.encode(Array($0)) }
            if secret.first != "-" { return secret }
        }
    }

    /// The value stored in place of `secret`: lower-case hex SHA-256.
    package static func hash(_ secret: String) -> String {
        Hex.encode(Array(digest(secret)))
    }

    /// SHA-256 of the secret's UTF-8 bytes, read in place.
    private static func digest(_ secret: String) -> SHA256.Digest {
        var secret = secret
        var hasher = SHA256()
        secret.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return hasher.finalize()
    }

    /// Whether `secret` hashes to `storedHash`, comparing in constant time.
    ///
    /// Every authenticated request comes here: the digest's hex digits are compared with the
    /// stored ones in place, without building the hex string or copying either side.
    package static func matches(_ secret: String, storedHash: String) -> Bool {
        let digest = digest(secret)
        var stored = storedHash
        return stored.withUTF8 { hex in
            guard hex.count == SHA256.byteCount * 2 else { return false }
            var difference: UInt8 = 0
            digest.withUnsafeBytes { bytes in
                for (index, byte) in bytes.enumerated() {
                    difference |= hex[2 * index] ^ Hex.digit(byte >> 4)
                    difference |= hex[2 * index + 1] ^ Hex.digit(byte & 0x0f)
                }
            }
            return difference == 0
        }
    }

    /// Compares two byte strings in time that depends only on their lengths.
    package static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }
}
