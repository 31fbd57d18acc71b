import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import HeraldMocks
import HeraldTestSupport
import HeraldWebPush
import NIOCore
import NIOSSL
import Testing

/// The mock push service refuses what a push service refuses (RFC 8030, RFC 8292 §4.2), so
/// that the client's tests against it mean something. Requests are made by hand here.
@Suite struct MockWebPushServerTests {
    let key = P256.Signing.PrivateKey()

    func jwt(_ claims: [String: JSONValue], key signer: P256.Signing.PrivateKey? = nil) throws -> String {
        let header = Base64URL.encode(Array(#"{"alg":"ES256","typ":"JWT"}"#.utf8))
        let input = header + "." + Base64URL.encode(Array(JSONValue.object(claims).jsonText.utf8))
        let signature = try (signer ?? key).signature(for: Array(input.utf8))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    var k: String { Base64URL.encode(Array(key.publicKey.x963Representation)) }

    @Test func refusesBadVAPIDAndMissingHeadersAndAcceptsAGoodRequest() async throws {
        let tls = try MockTLS()
        let clock = TestClock()
        var behavior = MockWebPushServer.Behavior()
        behavior.clock = clock.epochClock
        let server = MockWebPushServer(tls: tls, behavior: behavior)
        _ = try await server.start()
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = .makeClientConfiguration()
        configuration.tlsConfiguration?.additionalTrustRoots = [
            .certificates(try NIOSSLCertificate.fromPEMBytes(Array(tls.caCertificatePEM.utf8)))
        ]
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let subscriber = server.subscribe()
        let subscription = try WebPushSubscription(json: subscriber.subscriptionJSON(origin: server.origin))
        let body = try WebPushEncryption.encrypt(Array("hello".utf8), for: subscription)
        let now = clock.epochSeconds
        let good: [String: JSONValue] = ["aud": .string(server.origin), "exp": .int(now + 3600), "sub": .string("mailto:a@example.com")]

        func post(_ headers: [(String, String)], body bytes: [UInt8]? = nil) async throws -> (Int, String) {
            var request = HTTPClientRequest(url: subscription.endpoint)
            request.method = .POST
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(bytes: bytes ?? body))
            let response = try await http.execute(request, timeout: .seconds(10))
            let text = String(buffer: try await response.body.collect(upTo: 65536))
            return (Int(response.status.code), text)
        }
        func vapid(_ claims: [String: JSONValue], signer: P256.Signing.PrivateKey? = nil) throws -> (String, String) {
            ("authorization", "vapid t=\(try jwt(claims, key: signer)), k=\(k)")
        }
        let headers = [("ttl", "60"), ("content-encoding", "aes128gcm")]

        do {
            #expect(try await post(headers).0 == 401)
            var claims = good
            claims["aud"] = .string("https://fcm.googleapis.com")
            #expect(
                try await post(headers + [try vapid(claims)]) == (
                    403, #"{"code":403,"error":"Forbidden","message":"aud is not this push service's origin, \#(server.origin)"}"#
                ))
            claims = good
            claims["exp"] = .int(now + 25 * 3600)
            #expect(try await post(headers + [try vapid(claims)]).1.contains("more than 24 hours"))
            claims["exp"] = .int(now - 1)
            #expect(try await post(headers + [try vapid(claims)]).1.contains("expired"))
            claims = good
            claims["sub"] = nil
            #expect(try await post(headers + [try vapid(claims)]).1.contains("sub"))
            #expect(try await post(headers + [try vapid(good, signer: P256.Signing.PrivateKey())]).1.contains("signature"))
            #expect(try await post([("content-encoding", "aes128gcm"), try vapid(good)]).1.contains("TTL"))
            #expect(try await post([("ttl", "60"), ("content-encoding", "aesgcm"), try vapid(good)]).1.contains("aes128gcm"))
            #expect(try await post(headers + [("urgency", "urgent"), try vapid(good)]).0 == 400)
            #expect(try await post(headers + [try vapid(good)], body: Array(body.dropLast())).1.contains("could not decrypt"))
            #expect(server.received.isEmpty)

            let (status, _) = try await post(headers + [("urgency", "low"), ("topic", "abc_-1"), try vapid(good)])
            #expect(status == 201)
            #expect(server.received.map(\.text) == ["hello"])
        } catch {
            try? await http.shutdown()
            await server.shutdown()
            throw error
        }
        try await http.shutdown()
        await server.shutdown()
    }
}
