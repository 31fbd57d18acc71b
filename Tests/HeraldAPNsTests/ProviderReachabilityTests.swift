import Foundation
import HeraldAPNs
import HeraldCore
import HeraldHTTP
import HeraldMocks
import HeraldTestSupport
import Testing

/// Issue 31, defect 4: a failure to reach a provider comes back with its cause, and a bad extra
/// CA file is caught before anything is sent.
@Suite struct ProviderReachabilityTests {
    func notification() throws -> APNsNotification {
        let push = try PushInput(message: .init(body: "Hello"), target: .init(platform: "ios")).validated(now: 0)
        return try #require(try APNsRenderer.render(push, receiptID: "receipt-1"))
    }

    /// The mock's certificate without its CA trusted: every device is unanswered with a cause
    /// that says the certificate is not trusted, and the client reports itself unreachable.
    @Test func anUntrustedCertificateIsNamedAsTheCause() async throws {
        let mock = try await SignedMockAPNs.start()
        let client = try APNsClient(endpoint: "https://127.0.0.1:\(mock.port)", connectTimeout: .seconds(30))
        let results = await client.send(try notification(), deviceTokens: [randomAPNsToken(), randomAPNsToken()], topic: "t", bearer: "x")
        await client.shutdown()
        await mock.server.shutdown()
        for result in results {
            guard case .failure(let error) = result else {
                Issue.record("answered: \(result)")
                continue
            }
            #expect("\(error)".contains("its certificate is not trusted"), "\(error)")
            #expect("\(error)".contains("127.0.0.1:\(mock.port)"), "\(error)")
        }
        #expect(client.unreachable?.cause == "tls_untrusted", "\(String(describing: client.unreachable))")
        #expect(mock.server.statistics.requests == 0)
    }

    /// Nothing listening: refused, named as such; a connection that then opens clears it.
    @Test func aRefusedConnectionIsNamedAndClearedOnceTheProviderAnswers() async throws {
        let mock = try await SignedMockAPNs.start()
        let port = mock.port
        await mock.server.shutdown()
        let client = try APNsClient(endpoint: "https://127.0.0.1:\(port)", extraTrustedCAPEM: mock.tls.caCertificatePEM)
        let results = await client.send(try notification(), deviceTokens: [randomAPNsToken()], topic: "t", bearer: "x")
        guard case .failure(let error) = results[0] else {
            Issue.record("answered: \(results[0])")
            return
        }
        #expect("\(error)".contains("refused"), "\(error)")
        #expect(client.unreachable?.cause == "refused")

        // The provider comes back on the same port: the next send connects and the cause clears.
        var behavior = MockAPNsServer.Behavior()
        behavior.signingKeys = [SignedMockAPNs.keyID: mock.key.publicKey]
        let again = MockAPNsServer(tls: mock.tls, behavior: behavior)
        _ = try await again.start(port: port)
        let bearer = try mock.generator().token(issuedAt: Int64(Date().timeIntervalSince1970))
        let answered = await client.send(try notification(), deviceTokens: [randomAPNsToken()], topic: "com.example.app", bearer: bearer)
        if case .success(.accepted) = answered[0] {} else { Issue.record("\(answered[0])") }
        #expect(client.unreachable == nil)
        await client.shutdown()
        await again.shutdown()
    }

    /// The checks `herald serve` runs on `HERALD_EXTRA_CA_FILE` at start.
    @Test func anExtraCAFileIsCheckedWithItsNameAndCause() throws {
        let pem = try MockTLS().caCertificatePEM.trimmingCharacters(in: .whitespacesAndNewlines)
        let other = try MockTLS().caCertificatePEM
        #expect(throws: Never.self) { try ExtraCAFile.check(pem + "\n" + other, path: "both.pem") }
        let cases: [(String, String)] = [
            (pem + other, "runs on into the next one"),
            ("no certificate here\n", "holds no PEM certificate"),
            (pem.replacingOccurrences(of: "\n", with: "\n#") + "\n", "cannot be loaded"),
        ]
        for (text, cause) in cases {
            do {
                try ExtraCAFile.check(text, path: "/etc/herald/ca.pem")
                Issue.record("accepted: \(cause)")
            } catch {
                #expect(error.description.contains("/etc/herald/ca.pem"), "\(error)")
                #expect(error.description.contains(cause), "\(error)")
            }
        }
        #expect(throws: ExtraCAFileError.self) { try ExtraCAFile.load(path: "/nonexistent/ca.pem") }
    }
}
