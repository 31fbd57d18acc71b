import Foundation
import HeraldAPNs
import HeraldCore
import HeraldHTTP
import HeraldMocks
import HeraldTestSupport
import NIOCore
import NIOHPACK
import Testing

/// The mock plays Apple's sandbox or production: only the sandbox names each accepted
/// notification with an `apns-unique-id`.
@Suite struct MockAPNsEnvironmentTests {
    /// The headers of the answers to `count` notifications sent as raw HTTP/2 requests.
    private func answerHeaders(environment: APNsEnvironment, count: Int) async throws -> [HPACKHeaders] {
        let mock = try await SignedMockAPNs.start()
        mock.server.update { $0.environment = environment }
        let pool = HTTP2ConnectionPool(
            host: "127.0.0.1", port: mock.port, sslContext: try HTTP2ConnectionPool.makeSSLContext(extraTrustedCAPEM: mock.tls.caCertificatePEM))
        let bearer = try mock.generator().token(issuedAt: Int64(Date().timeIntervalSince1970))
        let requests = (0..<count).map { _ in
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":scheme", value: "https")
            headers.add(name: ":authority", value: "127.0.0.1")
            headers.add(name: ":path", value: "/3/device/" + randomAPNsToken())
            headers.add(name: "apns-topic", value: "com.example.app")
            headers.add(name: "apns-push-type", value: "alert")
            headers.add(name: "authorization", value: "bearer \(bearer)")
            return HTTP2Request(headers: headers, body: ByteBuffer(string: #"{"aps":{"alert":"hi"}}"#))
        }
        let responses = await pool.send(requests)
        await pool.shutdown()
        await mock.server.shutdown()
        return try responses.map { response in
            guard case .answered(200, let headers, _) = response else { throw MockAPNsEnvironmentError(response: "\(response)") }
            return headers
        }
    }

    @Test func sandboxAnswersWithDistinctUniqueIDs() async throws {
        let headers = try await answerHeaders(environment: .sandbox, count: 3)
        let ids = headers.compactMap { $0.first(name: "apns-unique-id") }
        #expect(ids.count == 3)
        #expect(Set(ids).count == 3)
        for id in ids { #expect(UUID(uuidString: id) != nil) }
        #expect(headers.allSatisfy { $0.first(name: "apns-id") != nil })
    }

    @Test func productionAnswersWithoutUniqueIDs() async throws {
        let headers = try await answerHeaders(environment: .production, count: 3)
        #expect(headers.allSatisfy { $0.first(name: "apns-unique-id") == nil })
        #expect(headers.allSatisfy { $0.first(name: "apns-id") != nil })
    }
}

private struct MockAPNsEnvironmentError: Error {
    let response: String
}
