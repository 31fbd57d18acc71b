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
    /// The headers of the answers to `count` notifications, all of which must be accepted.
    private func answerHeaders(environment: APNsEnvironment, count: Int) async throws -> [HPACKHeaders] {
        try await rawResponses(count: count, change: { $0.environment = environment }).map { response in
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

/// A header block that breaks RFC 9113's field syntax (a line break in a value) is refused by
/// whichever side checks it: the client before sending, the mock on arrival; with both checks
/// off it goes through, as it would to a lenient server.
@Suite struct HeaderBlockValidationTests {
    private func send(clientValidates: Bool, mockValidates: Bool) async throws -> HTTP2Response {
        try await rawResponses(
            count: 1, change: { $0.validatesHeaderBlocks = mockValidates }, clientValidates: clientValidates,
            extra: [("x-note", "line\r\nbreak")])[0]
    }

    private func accepted(_ response: HTTP2Response) -> Bool {
        if case .answered(200, _, _) = response { return true }
        return false
    }

    @Test func aValidatingClientDoesNotSendIt() async throws {
        #expect(!accepted(try await send(clientValidates: true, mockValidates: false)))
    }

    @Test func aValidatingMockRefusesIt() async throws {
        #expect(!accepted(try await send(clientValidates: false, mockValidates: true)))
    }

    @Test func withBothChecksOffItIsAnswered() async throws {
        #expect(accepted(try await send(clientValidates: false, mockValidates: false)))
    }
}

/// The answers to `count` notifications sent as raw HTTP/2 requests, each with `extra` headers.
private func rawResponses(
    count: Int, change: (inout MockAPNsServer.Behavior) -> Void = { _ in }, clientValidates: Bool = true,
    extra: [(String, String)] = []
) async throws -> [HTTP2Response] {
    let mock = try await SignedMockAPNs.start()
    mock.server.update(change)
    let pool = HTTP2ConnectionPool(
        host: "127.0.0.1", port: mock.port, sslContext: try HTTP2ConnectionPool.makeSSLContext(extraTrustedCAPEM: mock.tls.caCertificatePEM),
        validatesHeaderBlocks: clientValidates)
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
        for (name, value) in extra { headers.add(name: name, value: value) }
        return HTTP2Request(headers: headers, body: ByteBuffer(string: #"{"aps":{"alert":"hi"}}"#))
    }
    let responses = await pool.send(requests)
    await pool.shutdown()
    await mock.server.shutdown()
    return responses
}

private struct MockAPNsEnvironmentError: Error {
    let response: String
}
