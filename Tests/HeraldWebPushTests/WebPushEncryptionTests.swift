import Crypto
import HeraldCore
import Testing

@testable import HeraldWebPush

/// RFC 8291 §5 and Appendix A: the example message and its intermediate values (the RFC's
/// base64url with its presentation line breaks removed).
enum RFC8291Example {
    static let plaintext = "When I grow up, I want to be a watermelon"
    static let asPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let asPublic = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let uaPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let uaPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
    static let cek = "oIhVW04MRdy2XN9CiKLxTg"
    static let nonce = "4h_95klXJ5E_qnoN"
    static let header =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let ciphertext = "8pfeW0KbunFT06SuDKoJH9Ql87S1QUrdirN6GcG7sFz1y1sqLgVi1VhjVkHsUoEsbI_0LpXMuGvnzQ"
    /// §5: the whole request body.
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml"
        + "mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"
        + "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func bytes(_ base64URL: String) throws -> [UInt8] { try #require(Base64URL.decode(base64URL)) }
}

@Suite struct WebPushEncryptionTests {
    typealias Example = RFC8291Example

    @Test func reproducesTheRFC8291ExampleByteForByte() throws {
        let ephemeral = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Example.bytes(Example.asPrivate))
        #expect(Base64URL.encode(Array(ephemeral.publicKey.x963Representation)) == Example.asPublic)
        let body = try WebPushEncryption.encrypt(
            Array(Example.plaintext.utf8),
            userAgentPublicKey: try P256.KeyAgreement.PublicKey(x963Representation: try Example.bytes(Example.uaPublic)),
            authSecret: try Example.bytes(Example.authSecret), ephemeralKey: ephemeral, salt: try Example.bytes(Example.salt))
        #expect(Array(body.prefix(86)) == (try Example.bytes(Example.header)))
        #expect(Array(body.dropFirst(86)) == (try Example.bytes(Example.ciphertext)))
        #expect(body == (try Example.bytes(Example.body)))
        #expect(body.count == 144)
    }

    @Test func derivesTheRFC8291IntermediateKeyAndNonce() throws {
        let ua = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Example.bytes(Example.uaPrivate))
        let asKey = try P256.KeyAgreement.PublicKey(x963Representation: try Example.bytes(Example.asPublic))
        let keys = try WebPushEncryption.derive(
            ecdhSecret: try ua.sharedSecretFromKeyAgreement(with: asKey), authSecret: try Example.bytes(Example.authSecret),
            userAgentPublic: try Example.bytes(Example.uaPublic), serverPublic: try Example.bytes(Example.asPublic),
            salt: try Example.bytes(Example.salt))
        #expect(keys.key.withUnsafeBytes { Array($0) } == (try Example.bytes(Example.cek)))
        #expect(Array(keys.nonce) == (try Example.bytes(Example.nonce)))
    }

    @Test func decryptsTheRFC8291ExampleAsTheUserAgent() throws {
        let ua = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Example.bytes(Example.uaPrivate))
        #expect(Base64URL.encode(Array(ua.publicKey.x963Representation)) == Example.uaPublic)
        let plaintext = try WebPushEncryption.decrypt(
            try Example.bytes(Example.body), userAgentPrivateKey: ua, authSecret: try Example.bytes(Example.authSecret))
        #expect(String(decoding: plaintext, as: UTF8.self) == Example.plaintext)
    }

    @Test(arguments: [0, 1, 100, 3993])
    func roundTripsWithFreshKeysAndSalt(length: Int) throws {
        let ua = P256.KeyAgreement.PrivateKey()
        let auth = Array(SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) })
        let subscription = try WebPushSubscription(
            endpoint: "https://push.example.net/push/abc", p256dh: Base64URL.encode(Array(ua.publicKey.x963Representation)),
            auth: Base64URL.encode(auth))
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let first = try WebPushEncryption.encrypt(plaintext, for: subscription)
        let second = try WebPushEncryption.encrypt(plaintext, for: subscription)
        #expect(first.count == length + WebPushRenderer.encryptionOverhead)
        #expect(first.count <= 4096)
        #expect(first.prefix(16) != second.prefix(16), "a fresh salt per message")
        #expect(first[21..<86] != second[21..<86], "a fresh ephemeral key per message")
        #expect(try WebPushEncryption.decrypt(first, userAgentPrivateKey: ua, authSecret: auth) == plaintext)
        #expect(try WebPushEncryption.decrypt(second, userAgentPrivateKey: ua, authSecret: auth) == plaintext)
    }

    /// Each message's ephemeral key is new, a valid P-256 key whose ECDH agrees with the other side.
    @Test func ephemeralKeysAreFreshAndAgree() throws {
        let keys = (0..<50).map { _ in WebPushEncryption.ephemeralKey() }
        #expect(Set(keys.map { $0.publicKey.x963Representation }).count == 50)
        let peer = P256.KeyAgreement.PrivateKey()
        for key in keys.prefix(5) {
            let ours = try key.sharedSecretFromKeyAgreement(with: peer.publicKey)
            let theirs = try peer.sharedSecretFromKeyAgreement(
                with: try P256.KeyAgreement.PublicKey(x963Representation: key.publicKey.x963Representation))
            #expect(ours == theirs)
        }
    }

    @Test func paddingIsStrippedOnDecryption() throws {
        let ua = P256.KeyAgreement.PrivateKey()
        let auth = [UInt8](repeating: 7, count: 16)
        let body = try WebPushEncryption.encrypt(
            Array("short".utf8), userAgentPublicKey: ua.publicKey, authSecret: auth, ephemeralKey: .init(),
            salt: [UInt8](repeating: 1, count: 16), padding: 200)
        #expect(body.count == 86 + 5 + 1 + 200 + 16)
        #expect(try WebPushEncryption.decrypt(body, userAgentPrivateKey: ua, authSecret: auth) == Array("short".utf8))
    }

    @Test func aPlaintextThatDoesNotFitOneRecordIsRefused() throws {
        let ua = P256.KeyAgreement.PrivateKey()
        #expect(throws: WebPushError.payloadTooLarge) {
            try WebPushEncryption.encrypt(
                [UInt8](repeating: 0x41, count: 4096 - 17), userAgentPublicKey: ua.publicKey, authSecret: [UInt8](repeating: 0, count: 16),
                ephemeralKey: .init(), salt: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: WebPushError.invalidKey) {
            try WebPushEncryption.encrypt(
                [1], userAgentPublicKey: ua.publicKey, authSecret: [UInt8](repeating: 0, count: 15), ephemeralKey: .init(),
                salt: [UInt8](repeating: 0, count: 16))
        }
    }

    @Test func tamperedOrMisaddressedMessagesDoNotDecrypt() throws {
        let ua = try P256.KeyAgreement.PrivateKey(rawRepresentation: try Example.bytes(Example.uaPrivate))
        let auth = try Example.bytes(Example.authSecret)
        var body = try Example.bytes(Example.body)
        body[100] ^= 0x01
        #expect(throws: WebPushError.decryptionFailed) { try WebPushEncryption.decrypt(body, userAgentPrivateKey: ua, authSecret: auth) }
        #expect(throws: WebPushError.decryptionFailed) {
            try WebPushEncryption.decrypt(
                try Example.bytes(Example.body), userAgentPrivateKey: ua, authSecret: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: WebPushError.decryptionFailed) {
            try WebPushEncryption.decrypt(try Example.bytes(Example.body), userAgentPrivateKey: .init(), authSecret: auth)
        }
        #expect(throws: WebPushError.malformedMessage) {
            try WebPushEncryption.decrypt(Array(try Example.bytes(Example.body).prefix(90)), userAgentPrivateKey: ua, authSecret: auth)
        }
        var shortKeyID = try Example.bytes(Example.body)
        shortKeyID[20] = 64
        #expect(throws: WebPushError.malformedMessage) {
            try WebPushEncryption.decrypt(shortKeyID, userAgentPrivateKey: ua, authSecret: auth)
        }
    }
}
