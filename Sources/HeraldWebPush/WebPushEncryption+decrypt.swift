import Crypto

extension WebPushEncryption {
    /// Decrypts a Web Push message as the user agent does (RFC 8291 §3.4 and §4): one record,
    /// the application server's public key in `keyid`, padding ending in the 0x02 delimiter.
    ///
    /// Herald only sends; this is the receiving side, for the mock push service and tests.
    ///
    /// - Parameters:
    ///   - body: the request body (header and record).
    ///   - userAgentPrivateKey: the private half of the subscription's `p256dh`.
    ///   - authSecret: the subscription's `auth`.
    package static func decrypt(
        _ body: [UInt8], userAgentPrivateKey: P256.KeyAgreement.PrivateKey, authSecret: [UInt8]
    ) throws -> [UInt8] {
        guard body.count >= 21 else { throw WebPushError.malformedMessage("\(body.count) bytes are too few for an aes128gcm header") }
        let salt = Array(body[0..<16])
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let idLength = Int(body[20])
        guard recordSize >= 18 else { throw WebPushError.malformedMessage("record size \(recordSize) is under the minimum of 18") }
        guard idLength == 65 else {
            throw WebPushError.malformedMessage("keyid is \(idLength) bytes; Web Push puts the 65-byte sender key there")
        }
        guard body.count >= 21 + idLength else { throw WebPushError.malformedMessage("the header is cut short") }
        let serverPublic = Array(body[21..<(21 + idLength)])
        let serverKey: P256.KeyAgreement.PublicKey
        do {
            serverKey = try P256.KeyAgreement.PublicKey(x963Representation: serverPublic)
        } catch {
            throw WebPushError.invalidKey("keyid is not an uncompressed P-256 point")
        }
        let record = Array(body[(21 + idLength)...])
        guard record.count > tagSize else { throw WebPushError.malformedMessage("the record is shorter than its tag") }
        guard record.count <= recordSize else {
            throw WebPushError.malformedMessage("the body holds more than one \(recordSize)-byte record; Web Push allows one")
        }
        let keys = try derive(
            ecdhSecret: try userAgentPrivateKey.sharedSecretFromKeyAgreement(with: serverKey), authSecret: authSecret,
            userAgentPublic: Array(userAgentPrivateKey.publicKey.x963Representation), serverPublic: serverPublic, salt: salt)

        let padded: [UInt8]
        do {
            let box = try AES.GCM.SealedBox(
                nonce: keys.nonce, ciphertext: record[..<(record.count - tagSize)], tag: record[(record.count - tagSize)...])
            padded = Array(try AES.GCM.open(box, using: keys.key))
        } catch {
            throw WebPushError.decryptionFailed("the record does not authenticate with the subscription's keys")
        }
        // Strip the zero padding; the last record's delimiter is 0x02 (RFC 8188 §2).
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 0x02 else {
            throw WebPushError.decryptionFailed("the padding does not end in the 0x02 delimiter of a final record")
        }
        return Array(padded[..<delimiter])
    }
}
