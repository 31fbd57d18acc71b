import Foundation
import HeraldHTTP
import HeraldMocks
import HeraldTestSupport
import NIOCore
import NIOHPACK

extension SignedMockAPNs {
    /// Starts a mock (with `change` applied to its behaviour), sends it `count` notifications as
    /// raw HTTP/2 requests, each with `extra` headers, and returns the answers; the mock and the
    /// client are shut down after.
    static func rawResponses(
        count: Int, change: (inout MockAPNsServer.Behavior) -> Void = { _ in }, clientValidates: Bool = true,
        extra: [(String, String)] = []
    ) async throws -> [HTTP2Response] {
        let mock = try await start()
        mock.server.update(change)
        let pool = HTTP2ConnectionPool(
            host: "127.0.0.1", port: mock.port,
            sslContext: try HTTP2ConnectionPool.makeSSLContext(extraTrustedCAPEM: mock.tls.caCertificatePEM),
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
}
