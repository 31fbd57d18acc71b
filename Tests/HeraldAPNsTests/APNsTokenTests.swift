import Crypto
import Foundation
import HeraldAPNs
import HeraldCore
import Testing

@Suite struct APNsTokenGeneratorTests {
    @Test func signsAnES256JWTThatVerifiesWithTheKeysPublicHalf() throws {
        let key = P256.Signing.PrivateKey()
        let generator = try APNsTokenGenerator(
            credentials: APNsTokenCredentials(
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
        // Rejected five minutes in: tried again with the same token; the next may be signed at minute 20.
        #expect(machine.rejected(machine.lease("t1"), now: start + 5 * 60) == .retry)
        #expect(token(&machine, now: start + 10 * 60, signed: &signed) == .use("t1"))
        #expect(token(&machine, now: start + 20 * 60, signed: &signed) == .use("t2"))
        // Accepted with the new token: back to normal.
        machine.accepted(machine.lease("t2"))
        #expect(token(&machine, now: start + 30 * 60, signed: &signed) == .use("t2"))
        #expect(signed == 2)
    }

    @Test func aSecondRejectionMarksTheCredentialsFailing() {
        var machine = APNsTokenStateMachine()
        var signed = 0
        _ = token(&machine, now: start, signed: &signed)
        #expect(machine.rejected(machine.lease("t1"), now: start + 25 * 60) == .retry)
        #expect(token(&machine, now: start + 25 * 60, signed: &signed) == .use("t2"))
        #expect(machine.rejected(machine.lease("t2"), now: start + 25 * 60 + 1) == .markFailing)
        #expect(machine.nextToken(now: start + 90 * 60) == .fail)
        machine.reset()
        #expect(token(&machine, now: start + 91 * 60, signed: &signed) == .use("t3"))
    }

    /// A refused young token is tried once more as it is; refused on that try, the credentials fail.
    @Test func aYoungTokenRefusedTwiceMarksTheCredentialsFailing() {
        var machine = APNsTokenStateMachine()
        var signed = 0
        _ = token(&machine, now: start, signed: &signed)
        #expect(machine.rejected(machine.lease("t1"), now: start + 60) == .retry)
        #expect(token(&machine, now: start + 61, signed: &signed) == .use("t1"))
        #expect(machine.rejected(machine.lease("t1"), now: start + 62) == .markFailing)
        #expect(machine.nextToken(now: start + 63) == .fail)
        #expect(signed == 1)
    }

    /// The fan-out has many batches in flight with one token: the refusals of those sent before
    /// the first refusal came back, or with a token since replaced, are stale and cost nothing.
    @Test func staleRefusalsDoNotCountAgainstTheCredentials() {
        var machine = APNsTokenStateMachine()
        var signed = 0
        _ = token(&machine, now: start, signed: &signed)
        // Three batches leave with t1; the first refusal comes back.
        let inFlight = [machine.lease("t1"), machine.lease("t1"), machine.lease("t1")]
        #expect(machine.rejected(inFlight[0], now: start + 25 * 60) == .retry)
        // The other two were sent before it: stale.
        #expect(machine.rejected(inFlight[1], now: start + 25 * 60) == .retry)
        #expect(machine.rejected(inFlight[2], now: start + 25 * 60) == .retry)
        // The second try goes with a new token (t1 is 25 minutes old) and is accepted.
        #expect(token(&machine, now: start + 25 * 60, signed: &signed) == .use("t2"))
        machine.accepted(machine.lease("t2"))
        // A late refusal of t1 does not touch t2.
        #expect(machine.rejected(inFlight[0], now: start + 26 * 60) == .retry)
        #expect(token(&machine, now: start + 27 * 60, signed: &signed) == .use("t2"))
        // t2 refused later: one more try (with t2, 2 minutes old), then failing.
        let lease = machine.lease("t2")
        #expect(machine.rejected(lease, now: start + 27 * 60) == .retry)
        #expect(token(&machine, now: start + 27 * 60, signed: &signed) == .use("t2"))
        #expect(machine.rejected(machine.lease("t2"), now: start + 28 * 60) == .markFailing)
        #expect(signed == 2)
    }

    /// After a refusal, the replacement may be a token another process signed a while ago: it
    /// is used until it is due, not replaced again for being over 20 minutes old.
    @Test func anOlderReplacementFromAnotherProcessIsUsedUntilDue() {
        var machine = APNsTokenStateMachine()
        machine.signed("t1", issuedAt: start)
        #expect(machine.rejected(machine.lease("t1"), now: start + 45 * 60) == .retry)
        #expect(machine.nextToken(now: start + 45 * 60) == .sign(issuedAt: start + 45 * 60))
        let shared = APNsSharedProviderToken(token: "t2", issuedAt: start + 20 * 60, keyFingerprint: "k")
        #expect(APNsTokenStateMachine.reuses(shared, replacing: machine.token, now: start + 45 * 60))
        machine.signed("t2", issuedAt: start + 20 * 60)
        #expect(machine.nextToken(now: start + 46 * 60) == .use("t2"))
        #expect(machine.nextToken(now: start + 70 * 60) == .sign(issuedAt: start + 70 * 60))
        // The refused token itself, or a due one, is never reused.
        #expect(!APNsTokenStateMachine.reuses(shared, replacing: "t2", now: start + 46 * 60))
        #expect(!APNsTokenStateMachine.reuses(shared, replacing: "t1", now: start + 70 * 60))
    }

    /// An acceptance of a request sent before the refusal says nothing about the second try.
    @Test func onlyTheSecondTryClearsARefusal() {
        var machine = APNsTokenStateMachine()
        var signed = 0
        _ = token(&machine, now: start, signed: &signed)
        let early = machine.lease("t1")
        #expect(machine.rejected(machine.lease("t1"), now: start + 60) == .retry)
        machine.accepted(early)
        #expect(machine.rejected(machine.lease("t1"), now: start + 62) == .markFailing)
    }
}
