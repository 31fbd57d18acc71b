import Crypto

import struct Foundation.Data

/// Encrypts values at rest with AES-256-GCM (provider credentials, platform secrets).
///
/// The sealed form is `nonce ‖ ciphertext ‖ tag` (CryptoKit's combined representation),
/// with the record's identity as additional data so that a sealed value cannot be moved
/// to another row.
package struct SecretBox: Sendable {
    private let key: SymmetricKey

    /// A box around a 32-byte key.
    package init(keyBytes: [UInt8]) throws(ValidationError) {
        guard keyBytes.count == 32 else {
            throw ValidationError(
                code: "invalid_encryption_key",
                message: "the encryption key must be 32 bytes (base64 or hex encoded), got \(keyBytes.count)")
        }
        self.key = SymmetricKey(data: keyBytes)
    }

    /// Parses a key given as base64 (44 characters) or hex (64 characters).
    package init(encodedKey: String) throws(ValidationError) {
        let trimmed = encodedKey.trimmingASCIIWhitespace()
        if trimmed.utf8.count == 64, let bytes = Hex.decode(trimmed) {
            try self.init(keyBytes: bytes)
        } else if let bytes = Base64URL.decode(trimmed) {
            try self.init(keyBytes: bytes)
        } else {
            throw ValidationError(
                code: "invalid_encryption_key",
                message: "the encryption key must be 32 bytes, base64 or hex encoded")
        }
    }

    /// A new random key, base64 encoded, for a fresh installation.
    package static func generateEncodedKey() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// Encrypts `plaintext`, binding it to `context` (for example the platform's id).
    package func seal(_ plaintext: [UInt8], context: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array(context.utf8))
        guard let combined = box.combined else {
            throw ValidationError(code: "encryption_failed", message: "AES-GCM produced no combined form")
        }
        return Array(combined)
    }

    /// Decrypts what `seal` produced for the same `context`.
    package func open(_ sealed: [UInt8], context: String) throws -> [UInt8] {
        let box = try AES.GCM.SealedBox(combined: sealed)
        return Array(try AES.GCM.open(box, using: key, authenticating: Array(context.utf8)))
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks (compared as scalars,
    /// so that `\r\n`, one `Character`, is trimmed too).
    package func trimmingASCIIWhitespace() -> String {
        let isSpace: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(scalars[first...last])
    }
}
