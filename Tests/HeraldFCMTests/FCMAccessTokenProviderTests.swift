import Foundation
import HeraldCore
import HeraldHTTP
import HeraldTestSupport
import Testing
import _CryptoExtras

@testable import HeraldFCM

/// FCM's part of the access-token provider: the assertion it exchanges. The provider's rules
/// (one request in flight, renewal, a 401's one refresh) are `AccessTokenProviderTests`'.
@Suite struct FCMAccessTokenProviderTests {
    func credentials() throws -> FCMCredentials {
        guard case .fcm(let credentials) = try CredentialsInput(serviceAccount: JSONText(serviceAccountJSON())).validate(for: .android)
        else {
            throw CancellationError()
        }
        return credentials
    }

    func provider(_ endpoint: FakeTokenEndpoint, clock: TestClock) throws -> FCMAccessTokenProvider {
        try FCMAccessTokenProvider(credentials: credentials(), clock: clock.epochClock) { try await endpoint.exchange($0) }
    }

    @Test func renewsFiveMinutesBeforeExpiryWhileTheOldTokenKeepsServing() async throws {
        let endpoint = FakeTokenEndpoint()
        let clock = TestClock()
        let start = clock.epochSeconds
        let tokens = try provider(endpoint, clock: clock)
        #expect(try await tokens.token() == "a1")
        clock.advance(by: .seconds(3599 - 301))
        #expect(try await tokens.token() == "a1")
        #expect(endpoint.assertions.count == 1)

        // At five minutes before expiry one caller starts the renewal; held at the endpoint,
        // it keeps the others on the old token rather than waiting or starting their own.
        clock.advance(by: .seconds(1))
        let gate = Gate()
        endpoint.hold(gate)
        let renewing = Task { try await tokens.token() }
        var started = endpoint.started.makeAsyncIterator()
        #expect(await started.next() == 1)
        #expect(await started.next() == 2)
        #expect(try await tokens.token() == "a1")
        #expect(try await tokens.token() == "a1")
        gate.open()
        #expect(try await renewing.value == "a2")
        #expect(try await tokens.token() == "a2")
        #expect(endpoint.assertions.count == 2)
        #expect(try FakeTokenEndpoint.issuedAt(endpoint.assertions[0]) == start)
        #expect(try FakeTokenEndpoint.issuedAt(endpoint.assertions[1]) == start + 3599 - 300)
    }

    @Test func aRefusedServiceAccountStaysRefusedWithoutAskingAgain() async throws {
        let endpoint = FakeTokenEndpoint()
        let tokens = try provider(endpoint, clock: TestClock())
        let refused = FCMTokenError(reason: .refused("invalid_grant"), status: 400, message: "Invalid JWT Signature.")
        endpoint.fail(with: refused)
        await #expect(throws: refused) { try await tokens.token() }
        await #expect(throws: refused) { try await tokens.token() }
        #expect(endpoint.assertions.count == 1)
    }

    @Test func theAssertionIsAnRS256JWTForTheTokenEndpoint() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let credentials = FCMCredentials(
            serviceAccountJSON: "{}", projectID: "demo", clientEmail: "herald@demo.iam.gserviceaccount.com",
            privateKeyPEM: key.pemRepresentation, tokenURI: "https://127.0.0.1:9/token")
        let assertion = try FCMAssertionSigner(credentials: credentials).assertion(issuedAt: 1_800_000_000)
        let parts = assertion.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONDecoder().decode(JSONValue.self, from: Data(try #require(Base64URL.decode(parts[0]))))
        #expect(header == .object(["alg": .string("RS256"), "typ": .string("JWT")]))
        let claims = try JSONDecoder().decode(JSONValue.self, from: Data(try #require(Base64URL.decode(parts[1]))))
        #expect(
            claims
                == .object([
                    "iss": .string("herald@demo.iam.gserviceaccount.com"),
                    "scope": .string("https://www.googleapis.com/auth/firebase.messaging"),
                    "aud": .string("https://127.0.0.1:9/token"),
                    "iat": .int(1_800_000_000),
                    "exp": .int(1_800_003_600),
                ]))
        let signature = _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        let signed = Array((parts[0] + "." + parts[1]).utf8)
        #expect(key.publicKey.isValidSignature(signature, for: signed, padding: .insecurePKCS1v1_5))
        #expect(
            !(try _RSA.Signing.PrivateKey(keySize: .bits2048)).publicKey.isValidSignature(
                signature, for: signed, padding: .insecurePKCS1v1_5))
    }

    @Test func formEncodingEscapesAllButUnreservedCharacters() {
        #expect(
            OAuthTokenEndpoint.formEncoded("urn:ietf:params:oauth:grant-type:jwt-bearer")
                == "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer")
        #expect(OAuthTokenEndpoint.formEncoded("a.b_c-d~e f+g/é") == "a.b_c-d~e%20f%2Bg%2F%C3%A9")
    }
}
