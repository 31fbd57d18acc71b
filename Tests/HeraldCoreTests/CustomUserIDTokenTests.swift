import Crypto
import Foundation
import HeraldCore
import Testing

/// Signed custom user ids: compact HS256 JWS keyed with the platform secret, as text or as hex.
@Suite struct CustomUserIDTokenTests {
    let secret = "Xq3v9aQ2_Tz-platform-secret-43-characters0"

    /// A token built by hand, as a device (or `openssl dgst -sha256 -hmac`) would make it.
    func token(header: String = #"{"alg":"HS256","typ":"JWT"}"#, payload: String, key: [UInt8]) -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: key))
        return input + "." + Base64URL.encode(Array(mac))
    }

    @Test func aTokenSignedWithTheSecretsTextGivesItsID() throws {
        let signed = token(payload: #"{"custom_user_id":"jsmith"}"#, key: Array(secret.utf8))
        #expect(try CustomUserIDToken.verify(signed, secret: secret) == "jsmith")
        #expect(
            try CustomUserIDToken.verify(CustomUserIDToken.sign(customUserID: "Ann@Example.com", key: Array(secret.utf8)), secret: secret)
                == "Ann@Example.com")
    }

    /// Tokens made with the openssl recipe of docs/TOPICS.md (text key, and `-macopt hexkey:`).
    @Test func theOpenSSLRecipeOfTheDocsIsAccepted() throws {
        let text = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJjdXN0b21fdXNlcl9pZCI6ImpzbWl0aCJ9.KpA7da_IOgVZAhBy6t1owTcOT8qTuYNukLwijW4KTTQ"
        #expect(try CustomUserIDToken.verify(text, secret: secret) == "jsmith")
        let hex = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJjdXN0b21fdXNlcl9pZCI6ImpzbWl0aCJ9.LUGnauvj7MQgt_nx965adj_DEsFndoz8g0m-VxArx6M"
        #expect(try CustomUserIDToken.verify(hex, secret: "8f1e0c2d4b6a79583746a5b4c3d2e1f00112233445566778899aabbccddeeff0") == "jsmith")
        #expect(throws: ValidationError.self) { try CustomUserIDToken.verify(hex, secret: secret) }
    }

    @Test func aHexSecretAlsoWorksAsItsBytes() throws {
        let hexSecret = "8f1e0c2d4b6a79583746a5b4c3d2e1f00112233445566778899aabbccddeeff0"
        let bytes = try #require(Hex.decode(hexSecret))
        #expect(try CustomUserIDToken.verify(token(payload: #"{"custom_user_id":"a"}"#, key: bytes), secret: hexSecret) == "a")
        #expect(
            try CustomUserIDToken.verify(token(payload: #"{"custom_user_id":"b"}"#, key: Array(hexSecret.utf8)), secret: hexSecret) == "b")
        // A secret that is not hex is only ever its text.
        #expect(CustomUserIDToken.keys(forSecret: secret).count == 1)
    }

    @Test func aWrongSignatureIsRefused() throws {
        let forged = token(payload: #"{"custom_user_id":"admin"}"#, key: Array("another secret".utf8))
        let error = #expect(throws: ValidationError.self) { try CustomUserIDToken.verify(forged, secret: secret) }
        #expect(error?.code == "invalid_signature")
        #expect(error?.field == "custom_user_id")

        // A payload swapped under a valid signature is refused too.
        let good = token(payload: #"{"custom_user_id":"ann"}"#, key: Array(secret.utf8)).split(separator: ".")
        let swapped = [String(good[0]), Base64URL.encode(Array(#"{"custom_user_id":"bob"}"#.utf8)), String(good[2])].joined(separator: ".")
        #expect(throws: ValidationError.self) { try CustomUserIDToken.verify(swapped, secret: secret) }
    }

    @Test(arguments: [
        "jsmith",
        "a.b",
        "a.b.c.d",
        "..",
        "eyJhbGciOiJIUzI1NiJ9..c2ln",
        "e30.e30.c2ln",
        "not base64!.e30.c2ln",
    ])
    func malformedTokensNameTheField(_ text: String) {
        let error = #expect(throws: ValidationError.self) { try CustomUserIDToken.verify(text, secret: "s") }
        #expect(error?.field == "custom_user_id")
        #expect(error?.code == "invalid_field")
    }

    @Test func onlyHS256IsAccepted() {
        let none = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(#"{"custom_user_id":"x"}"#.utf8)) + ".AA"
        #expect(throws: ValidationError.self) { try CustomUserIDToken.verify(none, secret: secret) }
        let hs512 = token(header: #"{"alg":"HS512"}"#, payload: #"{"custom_user_id":"x"}"#, key: Array(secret.utf8))
        #expect(throws: ValidationError.self) { try CustomUserIDToken.verify(hs512, secret: secret) }
    }

    @Test func aSignedPayloadWithoutTheIDIsRefused() {
        let signed = token(payload: #"{"sub":"x"}"#, key: Array(secret.utf8))
        let error = #expect(throws: ValidationError.self) { try CustomUserIDToken.verify(signed, secret: secret) }
        #expect(error?.field == "custom_user_id")
    }
}
