import Crypto

/// Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188),
/// built on swift-crypto.
///
/// The application server makes an ephemeral P-256 key pair and a random 16-byte salt per
/// message. ECDH with the user agent's key, mixed with its auth secret through HKDF, gives the
/// input keying material; HKDF with the salt gives the AES-128-GCM key and nonce. The body is
/// one record: the header (salt, record size, the ephemeral public key as `keyid`) and the
/// plaintext with the padding delimiter 0x02, encrypted.
package enum WebPushEncryption {
    /// The record size written in the header: one record of up to 4096 bytes, as push services take.
    package static let recordSize: UInt32 = 4096
    /// salt (16) + rs (4) + idlen (1) + keyid (65).
    package static let headerSize = 86
    /// The AES-GCM tag.
    static let tagSize = 16

    /// Encrypts `plaintext` for a subscription, with a fresh ephemeral key and salt.
    package static func encrypt(_ plaintext: [UInt8], for subscription: WebPushSubscription) throws -> [UInt8] {
        try encrypt(
            plaintext, userAgentPublicKey: subscription.userAgentKey, authSecret: subscription.authSecret,
            ephemeralKey: ephemeralKey(), salt: randomSalt())
    }

    /// A fresh ephemeral key: 32 random bytes taken as the scalar (drawn again in the
    /// negligible case that they are not below the group order). `PrivateKey()` makes a key fit
    /// for long-term use instead: a FIPS pairwise test (an ECDSA signature and its check) per key,
    /// and half the keys drawn again for a compact representation — three to four times the
    /// elliptic-curve work, for a key used once for ECDH.
    static func ephemeralKey() -> P256.KeyAgreement.PrivateKey {
        while true {
            let scalar = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
            if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: scalar) { return key }
        }
    }

    /// Encrypts `plaintext` with the given ephemeral key and salt (reproducible, for tests:
    /// never reuse either for real messages).
    ///
    /// - Parameters:
    ///   - userAgentPublicKey: the subscription's `p256dh`.
    ///   - authSecret: the subscription's `auth` (16 bytes).
    ///   - ephemeralKey: the application server's key pair for this message.
    ///   - salt: 16 random bytes.
    ///   - padding: zero bytes added after the delimiter, to hide the length.
    ///   - recordSize: the `rs` header field; the padded record must be smaller.
    package static func encrypt(
        _ plaintext: [UInt8], userAgentPublicKey: P256.KeyAgreement.PublicKey, authSecret: [UInt8],
        ephemeralKey: P256.KeyAgreement.PrivateKey, salt: [UInt8], padding: Int = 0, recordSize: UInt32 = recordSize
    ) throws -> [UInt8] {
        guard salt.count == 16 else { throw WebPushError.invalidKey("the salt must be 16 bytes, not \(salt.count)") }
        guard padding >= 0 else { throw WebPushError.payloadTooLarge("padding cannot be negative") }
        // RFC 8291 §4: rs must exceed plaintext + delimiter + padding + tag, so the record is the last.
        let recordLength = plaintext.count + 1 + padding + tagSize
        guard recordLength < Int(recordSize) else {
            throw WebPushError.payloadTooLarge(
                "\(plaintext.count) bytes of plaintext do not fit a \(recordSize)-byte record (at most \(Int(recordSize) - 1 - padding - tagSize - 1))"
            )
        }
        let asPublic = Array(ephemeralKey.publicKey.x963Representation)
        let keys = try derive(
            ecdhSecret: try ephemeralKey.sharedSecretFromKeyAgreement(with: userAgentPublicKey),
            authSecret: authSecret, userAgentPublic: Array(userAgentPublicKey.x963Representation), serverPublic: asPublic, salt: salt)

        var record = plaintext
        record.reserveCapacity(plaintext.count + 1 + padding)
        record.append(0x02)
        record.append(contentsOf: repeatElement(0, count: padding))
        let sealed = try AES.GCM.seal(record, using: keys.key, nonce: keys.nonce)

        var body = salt
        body.reserveCapacity(headerSize + recordLength)
        body.append(contentsOf: withUnsafeBytes(of: recordSize.bigEndian) { Array($0) })
        body.append(UInt8(asPublic.count))
        body.append(contentsOf: asPublic)
        body.append(contentsOf: sealed.ciphertext)
        body.append(contentsOf: sealed.tag)
        return body
    }

    /// The content encryption key and nonce of one message (RFC 8291 §3.4, RFC 8188 §2.2–2.3).
    struct Keys {
        var key: SymmetricKey
        var nonce: AES.GCM.Nonce
    }

    static func derive(
        ecdhSecret: SharedSecret, authSecret: [UInt8], userAgentPublic: [UInt8], serverPublic: [UInt8], salt: [UInt8]
    ) throws -> Keys {
        guard authSecret.count == 16 else { throw WebPushError.invalidKey("the auth secret must be 16 bytes, not \(authSecret.count)") }
        // IKM = HKDF(salt: auth_secret, ikm: ecdh_secret, info: "WebPush: info" 0x00 ua_public as_public, 32)
        let keyInfo = Array("WebPush: info".utf8) + [0] + userAgentPublic + serverPublic
        let ikm = ecdhSecret.hkdfDerivedSymmetricKey(using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)
        // PRK = HKDF-Extract(salt, IKM); CEK and NONCE expanded from it.
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let cek = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        return Keys(key: cek, nonce: try nonce.withUnsafeBytes { try AES.GCM.Nonce(data: Array($0)) })
    }

    static func randomSalt() -> [UInt8] {
        SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }
    }
}
