import Crypto
import Foundation
import HeraldCore
import Testing
import _CryptoExtras

/// The one JWT signing path: each algorithm's signature verifies with the key's public half (or
/// the same secret) and no other, and the header names the algorithm.
@Suite struct JWTSignerTests {
    func parts(_ token: String) throws -> (header: JSONValue, claims: JSONValue, input: [UInt8], signature: [UInt8]) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        let header = try JSONDecoder().decode(JSONValue.self, from: Data(try #require(Base64URL.decode(parts[0]))))
        let claims = try JSONDecoder().decode(JSONValue.self, from: Data(try #require(Base64URL.decode(parts[1]))))
        return (header, claims, Array((parts[0] + "." + parts[1]).utf8), try #require(Base64URL.decode(parts[2])))
    }

    let claims = JSONValue.object(["iss": .string("herald"), "iat": .int(1_800_000_000)])

    @Test func es256() throws {
        let key = P256.Signing.PrivateKey()
        let token = try parts(JWTSigner(.es256(key)).sign(claims: claims, header: ["kid": .string("K1")]))
        #expect(token.header == .object(["alg": .string("ES256"), "kid": .string("K1")]))
        #expect(token.claims == claims)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: token.signature)
        #expect(key.publicKey.isValidSignature(signature, for: token.input))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: token.input))
    }

    @Test func rs256() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let token = try parts(JWTSigner(.rs256(key)).sign(claims: claims))
        #expect(token.header == .object(["alg": .string("RS256"), "typ": .string("JWT")]))
        let signature = _RSA.Signing.RSASignature(rawRepresentation: token.signature)
        #expect(key.publicKey.isValidSignature(signature, for: token.input, padding: .insecurePKCS1v1_5))
        #expect(
            !(try _RSA.Signing.PrivateKey(keySize: .bits2048)).publicKey.isValidSignature(
                signature, for: token.input, padding: .insecurePKCS1v1_5))
    }

    @Test func hs256() throws {
        let key = SymmetricKey(data: Array("secret".utf8))
        let token = try parts(JWTSigner(.hs256(key)).sign(claims: claims))
        #expect(token.header == .object(["alg": .string("HS256"), "typ": .string("JWT")]))
        #expect(HMAC<SHA256>.isValidAuthenticationCode(token.signature, authenticating: token.input, using: key))
        #expect(
            !HMAC<SHA256>.isValidAuthenticationCode(
                token.signature, authenticating: token.input, using: SymmetricKey(data: Array("other".utf8))))
    }
}
