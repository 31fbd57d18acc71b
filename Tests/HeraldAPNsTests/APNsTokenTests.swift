import Crypto
import Foundation
import HeraldAPNs
import HeraldCore
import Testing

@Suite struct APNsTokenGeneratorTests {
    @Test func signsAnES256JWTThatVerifiesWithTheKeysPublicHalf() throws {
        let key = P256.Signing.PrivateKey()
        let generator = try APNsTokenGenerator(credentials: APNsTokenCredentials(
            privateKeyPEM: key.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example.app",
            environment: .sandbox))
        let token = try generator.token(issuedAt: 1_800_000_000)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(parts[0])))) as? [String: String]
        #expect(header == ["alg": "ES256", "kid": "ABC123DEFG"])
        let claims = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(parts[1])))) as? [String: Any]
        #expect(claims?["iss"] as? String == "DEF123GHIJ")
        #expect(claims?["iat"] as? Int == 1_800_000_000)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
        #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
    }
}

@Suite struct APNsTokenStateMachineTests {
    let start: Int64 = 1_800_000_000

    /// Drives the machine like a sender would, signing with a counter instead of a key.
    func token(_ machine: inout APNsTokenStateMachine, now: Int64, signed: inout Int) -> APNsTokenStateMachine.Action {
        let action = machine.nextToken(now: now)
        if case .sign(let issuedAt) = action {
            signed += 1
            machine.signed("t\(signed)", issuedAt: issuedAt)
            return .use("t\(signed)")
        }
        return action
    }

    @Test func reusesATokenForFiftyMinutesThenSignsAnother() {
        var machine = APNsTokenStateMachine()
        var signed = 0
        #expect(token(&machine, now: start, signed: &signed) == .use("t1"))
        for minute in stride(from: 1, to: 50, by: 7) {
            #expect(token(&machine, now: start + Int64(minute) * 60, signed: &signed) == .use("t1"))
        }
        #expect(token(&machine, now: start + 50 * 60, signed: &signed) == .use("t2"))
        #expect(token(&machine, now: start + 99 * 60, signed: &signed) == .use("t2"))
        #expect(token(&machine, now: start + 100 * 60, signed: &signed) == .use("t3"))
        #expect(signed == 3)
    }

    @Test func aRejectionRefreshesOnceButNeverWithinTwentyMinutes() {
        var machine = APNsTokenStateMachine()
        var signed = 0
        _ = token(&machine, now: start, signed: &signed)
        // Rejected five minutes in: the next token may be signed at minute 20.
        #expect(machine.rejected(now: start + 5 * 60) == .retryAt(start + 20 * 60))
        #expect(token(&machine, now: start + 10 * 60, signed: &signed) == .use("t1"))
        #expect(token(&machine, now: start + 20 * 60, signed: &signed) == .use("t2"))
        // Accepted with the new token: back to normal.
        machine.accepted()
        #expect(token(&machine, now: start + 30 * 60, signed: &signed) == .use("t2"))
        #expect(signed == 2)
    }

    @Test func aSecondRejectionMarksTheCredentialsFailing() {
        var machine = APNsTokenStateMachine()
        var signed = 0
        _ = token(&machine, now: start, signed: &signed)
        #expect(machine.rejected(now: start + 25 * 60) == .retryWithNewToken)
        #expect(token(&machine, now: start + 25 * 60, signed: &signed) == .use("t2"))
        #expect(machine.rejected(now: start + 25 * 60 + 1) == .markFailing)
        #expect(machine.nextToken(now: start + 90 * 60) == .fail)
        machine.reset()
        #expect(token(&machine, now: start + 91 * 60, signed: &signed) == .use("t3"))
    }
}
