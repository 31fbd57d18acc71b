import Crypto
import Foundation
import HeraldCore
import HeraldTestSupport
import HeraldWebPush
import Testing

func vapidCredentials(_ key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(), subject: String = "mailto:ops@example.com")
    -> VAPIDCredentials
{
    VAPIDCredentials(
        privateKey: Base64URL.encode(Array(key.rawRepresentation)),
        publicKey: Base64URL.encode(Array(key.publicKey.x963Representation)), subject: subject)
}

/// The parts of a VAPID `Authorization` header, read as a push service would.
struct VAPIDHeader {
    var token: String
    var key: String
    var header: [String: Any]
    var claims: [String: Any]
    var signingInput: String
    var signature: [UInt8]

    init(_ authorization: String) throws {
        #expect(authorization.hasPrefix("vapid t="))
        let parameters = authorization.dropFirst("vapid ".count).split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
        }
        #expect(parameters.map { $0[0] } == ["t", "k"])
        token = try #require(parameters.first { $0[0] == "t" }?[1])
        key = try #require(parameters.first { $0[0] == "k" }?[1])
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let headerBytes = try #require(Base64URL.decode(parts[0]))
        let claimsBytes = try #require(Base64URL.decode(parts[1]))
        header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
        claims = try #require(try JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any])
        signingInput = parts[0] + "." + parts[1]
        signature = try #require(Base64URL.decode(parts[2]))
    }
}

@Suite struct VAPIDTokenGeneratorTests {
    @Test func signsAnES256JWTForTheOriginWithTheContact() throws {
        let key = P256.Signing.PrivateKey()
        let generator = try VAPIDTokenGenerator(credentials: vapidCredentials(key))
        #expect(generator.publicKey == Base64URL.encode(Array(key.publicKey.x963Representation)))
        let token = try generator.token(audience: "https://push.example.net", expiresAt: 1_800_043_200)
        let parsed = try VAPIDHeader(generator.authorization(token: token))
        #expect(parsed.token == token)
        #expect(parsed.key == generator.publicKey)
        #expect(parsed.header["alg"] as? String == "ES256")
        #expect(parsed.header["typ"] as? String == "JWT")
        #expect(parsed.claims["aud"] as? String == "https://push.example.net")
        #expect((parsed.claims["exp"] as? NSNumber)?.int64Value == 1_800_043_200)
        #expect(parsed.claims["sub"] as? String == "mailto:ops@example.com")
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: parsed.signature)
        #expect(key.publicKey.isValidSignature(signature, for: Array(parsed.signingInput.utf8)))
    }

    @Test func theKeyIsDerivedFromThePrivateKeyNotTrustedFromStorage() throws {
        let key = P256.Signing.PrivateKey()
        var credentials = vapidCredentials(key)
        credentials.publicKey = Base64URL.encode(Array(P256.Signing.PrivateKey().publicKey.x963Representation))
        #expect(try VAPIDTokenGenerator(credentials: credentials).publicKey == Base64URL.encode(Array(key.publicKey.x963Representation)))
        credentials.privateKey = "too-short"
        #expect(throws: WebPushError.invalidKey) { try VAPIDTokenGenerator(credentials: credentials) }
    }
}

@Suite struct VAPIDTokenCacheTests {
    let start: Int64 = 1_800_000_000
    let origin = "https://fcm.googleapis.com"

    /// Drives the cache like the signer does, signing with a counter instead of a key.
    func token(_ cache: inout VAPIDTokenCache, _ audience: String, now: Int64, signed: inout Int) -> String {
        switch cache.token(for: audience, now: now) {
        case .use(let token):
            return token
        case .sign(let expiresAt):
            #expect(expiresAt == now + 12 * 3600)
            signed += 1
            cache.signed("t\(signed)", for: audience, expiresAt: expiresAt, now: now)
            return "t\(signed)"
        }
    }

    @Test func reusesATokenUntilAnHourIsLeftThenSignsAnother() {
        var cache = VAPIDTokenCache()
        var signed = 0
        #expect(token(&cache, origin, now: start, signed: &signed) == "t1")
        for hour in stride(from: Int64(1), through: 10, by: 3) {
            #expect(token(&cache, origin, now: start + hour * 3600, signed: &signed) == "t1")
        }
        #expect(token(&cache, origin, now: start + 11 * 3600 - 1, signed: &signed) == "t1")
        #expect(token(&cache, origin, now: start + 11 * 3600, signed: &signed) == "t2")
        #expect(token(&cache, origin, now: start + 21 * 3600, signed: &signed) == "t2")
        #expect(token(&cache, origin, now: start + 22 * 3600, signed: &signed) == "t3")
        #expect(signed == 3)
    }

    @Test func eachOriginHasItsOwnToken() {
        var cache = VAPIDTokenCache()
        var signed = 0
        #expect(token(&cache, origin, now: start, signed: &signed) == "t1")
        #expect(token(&cache, "https://updates.push.services.mozilla.com", now: start + 60, signed: &signed) == "t2")
        #expect(token(&cache, origin, now: start + 120, signed: &signed) == "t1")
        #expect(token(&cache, "https://updates.push.services.mozilla.com", now: start + 180, signed: &signed) == "t2")
        #expect(cache.count == 2)
    }

    @Test func aRejectedTokenIsSignedAgainAtOnce() {
        var cache = VAPIDTokenCache()
        var signed = 0
        _ = token(&cache, origin, now: start, signed: &signed)
        cache.rejected(audience: origin)
        #expect(token(&cache, origin, now: start + 5, signed: &signed) == "t2")
        #expect(token(&cache, origin, now: start + 10, signed: &signed) == "t2")
    }

    @Test func aClockThatSteppedBackNeverSendsAnExpiryOverTheLimit() {
        var cache = VAPIDTokenCache()
        var signed = 0
        _ = token(&cache, origin, now: start, signed: &signed)
        // Two hours back, the cached token would expire 14 hours from "now": sign one for 12.
        #expect(token(&cache, origin, now: start - 2 * 3600, signed: &signed) == "t2")
    }

    @Test func tokensThatWouldNotBeReusedAreForgotten() {
        var cache = VAPIDTokenCache()
        var signed = 0
        for index in 0..<50 {
            _ = token(&cache, "https://wns2-\(index).notify.windows.com", now: start, signed: &signed)
        }
        #expect(cache.count == 50)
        _ = token(&cache, origin, now: start + 12 * 3600, signed: &signed)
        #expect(cache.count == 1)
        cache.reset()
        #expect(cache.count == 0)
    }
}

@Suite struct VAPIDSignerTests {
    @Test func reusesTheSignedHeaderPerOriginAndRenewsItOnTheInjectedClock() throws {
        let clock = TestClock()
        let key = P256.Signing.PrivateKey()
        let signer = try VAPIDSigner(credentials: vapidCredentials(key), clock: clock.epochClock)
        let first = try signer.authorization(audience: "https://push.example.net")
        clock.advance(by: .seconds(3600))
        #expect(try signer.authorization(audience: "https://push.example.net") == first)
        let other = try signer.authorization(audience: "https://other.example.net")
        #expect(other != first)
        #expect(try VAPIDHeader(other).claims["aud"] as? String == "https://other.example.net")

        clock.advance(by: .seconds(10 * 3600))
        let renewed = try signer.authorization(audience: "https://push.example.net")
        #expect(renewed != first)
        let claims = try VAPIDHeader(renewed).claims
        #expect((claims["exp"] as? NSNumber)?.int64Value == clock.epochSeconds + 12 * 3600)

        signer.rejected(audience: "https://push.example.net")
        clock.advance(by: .seconds(1))
        #expect(try signer.authorization(audience: "https://push.example.net") != renewed)
    }
}
