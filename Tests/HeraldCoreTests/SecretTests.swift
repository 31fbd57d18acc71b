import HeraldCore
import Testing

import struct Foundation.UUID

@Suite struct SecretTests {
    /// One in 64 base64url strings starts with `-`; of 2,000 draws, some would.
    @Test func generatedSecretsNeverStartWithADash() {
        let secrets = (0..<2_000).map { _ in Secret.generate() }
        #expect(secrets.allSatisfy { $0.first != "-" })
        #expect(secrets.contains { $0.contains("-") })
    }

    @Test func generatedSecretsAreLongRandomAndURLSafe() {
        let secrets = (0..<100).map { _ in Secret.generate() }
        #expect(Set(secrets).count == 100)
        for secret in secrets {
            #expect(secret.count == 43)
            #expect(Base64URL.decode(secret)?.count == 32)
            #expect(!secret.contains("+") && !secret.contains("/") && !secret.contains("=") && !secret.contains(":"))
        }
    }

    @Test func hashMatchesOnlyTheSameSecret() {
        let secret = Secret.generate()
        let hash = Secret.hash(secret)
        #expect(hash.count == 64)
        #expect(hash != secret)
        #expect(Secret.matches(secret, storedHash: hash))
        #expect(!Secret.matches(secret + "x", storedHash: hash))
        #expect(!Secret.matches("", storedHash: hash))
    }

    /// The stored hash is compared digit by digit: any other digit anywhere, another case, a
    /// shorter or longer value, or a non-ASCII one fails.
    @Test func matchesComparesEveryDigitOfTheStoredHash() {
        let secret = Secret.generate()
        let hash = Array(Secret.hash(secret).utf8)
        for index in hash.indices {
            var changed = hash
            changed[index] = changed[index] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            #expect(!Secret.matches(secret, storedHash: String(decoding: changed, as: UTF8.self)))
        }
        let text = String(decoding: hash, as: UTF8.self)
        #expect(!Secret.matches(secret, storedHash: text.uppercased()) || text.uppercased() == text)
        #expect(!Secret.matches(secret, storedHash: String(text.dropLast())))
        #expect(!Secret.matches(secret, storedHash: text + "0"))
        #expect(!Secret.matches(secret, storedHash: ""))
        #expect(!Secret.matches(secret, storedHash: String(text.dropLast(2)) + "é"))
        // Non-ASCII secrets hash their UTF-8 bytes, as `hash` does.
        #expect(Secret.matches("pässwörd", storedHash: Secret.hash("pässwörd")))
    }

    @Test func constantTimeEqualsComparesWholeValues() {
        #expect(Secret.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!Secret.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!Secret.constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(Secret.constantTimeEquals([], []))
    }

    @Test func hexRoundTripsAndRejectsMalformedText() {
        #expect(Hex.encode([0x00, 0xab, 0xff]) == "00abff")
        #expect(Hex.decode("00ABff") == [0x00, 0xab, 0xff])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }

    @Test func base64URLRoundTripsWithoutPadding() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("="))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("not base64!") == nil)
    }
}

@Suite struct SecretBoxTests {
    @Test func sealsAndOpensInTheSameContext() throws {
        let box = try SecretBox(encodedKey: SecretBox.generateEncodedKey())
        let sealed = try box.seal(Array("credentials".utf8), context: "platform:1")
        #expect(!sealed.isEmpty)
        #expect(String(decoding: sealed, as: UTF8.self).contains("credentials") == false)
        #expect(try box.open(sealed, context: "platform:1") == Array("credentials".utf8))
    }

    @Test func refusesAnotherContextOrKey() throws {
        let box = try SecretBox(encodedKey: SecretBox.generateEncodedKey())
        let other = try SecretBox(encodedKey: SecretBox.generateEncodedKey())
        let sealed = try box.seal(Array("x".utf8), context: "a")
        #expect(throws: (any Error).self) { try box.open(sealed, context: "b") }
        #expect(throws: (any Error).self) { try other.open(sealed, context: "a") }
    }

    @Test func acceptsHexOrBase64KeysOfThirtyTwoBytes() throws {
        _ = try SecretBox(encodedKey: String(repeating: "ab", count: 32))
        _ = try SecretBox(encodedKey: SecretBox.generateEncodedKey() + "\n")
        #expect(throws: ValidationError.self) { try SecretBox(encodedKey: "c2hvcnQ=") }
        #expect(throws: ValidationError.self) { try SecretBox(encodedKey: "%%%") }
    }
}

@Suite struct TimeOrderedUUIDTests {
    @Test func carriesVersionVariantAndTimeInOrder() {
        let early = UUID.timeOrdered(milliseconds: 1_700_000_000_000)
        let late = UUID.timeOrdered(milliseconds: 1_700_000_000_001)
        let text = early.uuidString.lowercased()
        #expect(Array(text)[14] == "7")
        #expect("89ab".contains(Array(text)[19]))
        #expect(text.hasPrefix("018bcfe5-6800"))
        #expect(early.uuidString < late.uuidString)
        #expect(UUID.timeOrdered(milliseconds: 5) != UUID.timeOrdered(milliseconds: 5))
    }

    /// Many in one millisecond: their random bits tell them apart.
    @Test func manyInOneMillisecondAreDistinct() {
        let uuids = (0..<2_000).map { _ in UUID.timeOrdered(milliseconds: 5) }
        #expect(Set(uuids).count == uuids.count)
        #expect(uuids.allSatisfy { $0.uuidString.lowercased().hasPrefix("00000000-0005-7") })
    }
}
