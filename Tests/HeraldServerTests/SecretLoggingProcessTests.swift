import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import HeraldMocks
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import Testing
import _CryptoExtras

#if canImport(Glibc)
    import Glibc
#endif

/// The real `herald serve` at trace level, with an authenticated outbound proxy, a database
/// password, every kind of provider credential and a push through the proxy: no secret appears in
/// anything it writes.
@Suite(.serialized) struct SecretLoggingProcessTests {
    /// A secret and what it is, for the failure message.
    struct Secret {
        var name: String
        var value: String
    }

    @Test(arguments: Backend.available)
    func noSecretIsWrittenAtTraceLevel(_ backend: Backend) async throws {
        let tls = try MockTLS()
        var behavior = MockFCMServer.Behavior()
        behavior.acceptAnyAccount = true
        let fcm = MockFCMServer(tls: tls, behavior: behavior)
        let fcmPort = try await fcm.start()
        var apnsBehavior = MockAPNsServer.Behavior()
        apnsBehavior.acceptAnySigningKey = true
        let apns = MockAPNsServer(tls: tls, behavior: apnsBehavior)
        let apnsPort = try await apns.start()
        let proxy = MockProxyServer(kind: .httpConnect)
        let proxyPort = try await proxy.start()
        do {
            try await exercise(
                backend, fcm: fcm, fcmPort: fcmPort, apns: apns, apnsPort: apnsPort, tls: tls, proxy: proxy, proxyPort: proxyPort)
        } catch {
            await fcm.shutdown()
            await apns.shutdown()
            await proxy.shutdown()
            throw error
        }
        await fcm.shutdown()
        await apns.shutdown()
        await proxy.shutdown()
    }

    private func exercise(
        _ backend: Backend, fcm: MockFCMServer, fcmPort: Int, apns: MockAPNsServer, apnsPort: Int, tls: MockTLS, proxy: MockProxyServer,
        proxyPort: Int
    ) async throws {
        let directory = NSTemporaryDirectory() + "herald-secrets-" + UUID().lowercasedString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        try await withTestDatabase(backend) { db in
            var secrets: [Secret] = []
            func secret(_ name: String, _ value: String) -> String {
                secrets.append(Secret(name: name, value: value))
                return value
            }
            let caFile = directory + "/mock-ca.pem"
            try tls.caCertificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
            let proxyPassword = secret("proxy password", "proxy-pass-\(UUID().lowercasedString)")
            _ = secret("proxy credentials", Data("courier:\(proxyPassword)".utf8).base64EncodedString())
            let adminToken = secret("root admin token", "root-\(UUID().lowercasedString)")
            let environment = [
                "HERALD_ENCRYPTION_KEY": secret(
                    "encryption key", Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64EncodedString()),
                "HERALD_ADMIN_TOKEN": adminToken,
                "HERALD_PROXY": "http://courier:\(proxyPassword)@127.0.0.1:\(proxyPort)",
                "HERALD_FCM_ENDPOINT": "https://127.0.0.1:\(fcmPort)",
                "HERALD_APNS_ENDPOINT": "https://127.0.0.1:\(apnsPort)",
                "HERALD_EXTRA_CA_FILE": caFile,
            ]
            var arguments = ["--log-level", "trace", "--data-dir", directory + "/data"]
            if let url = db.databaseURL {
                // The test server trusts every local connection, so any password is accepted.
                let password = secret("database password", "db-pass-\(UUID().lowercasedString)")
                arguments += ["--database-url", url.replacingOccurrences(of: "://herald@", with: "://herald:\(password)@")]
            }
            let server = try await HeraldProcess(arguments, environment: environment, logDirectory: directory, name: "serve")
            defer { server.kill(SIGKILL) }
            let api = API(port: server.port)

            // An app and a platform of every credential kind, through the admin API.
            let admin = ["Authorization": "Bearer \(adminToken)"]
            let app = try await api.call(.POST, "/admin/v1/apps", headers: admin, body: #"{"name":"Secrets"}"#, expect: .created)
            let appUUID = try #require(app["uuid"] as? String)
            _ = secret("api key", try #require(app["api_key"] as? String))
            let p8 = P256.Signing.PrivateKey().pemRepresentation
            _ = secret("p8 key", try #require(p8.split(separator: "\n").dropFirst().first.map(String.init)))
            let vapid = P256.Signing.PrivateKey()
            let account = try MockFCMServer.makeServiceAccount(tokenURI: "https://127.0.0.1:\(fcmPort)/token")
            let accountKey = try #require(
                (try JSONSerialization.jsonObject(with: Data(account.json.utf8)) as? [String: String])?["private_key"])
            _ = secret("service-account key", try #require(accountKey.split(separator: "\n").dropFirst().first.map(String.init)))
            let credentials: [(type: String, json: String)] = [
                ("ios", #"{"p8":\#(json(p8)),"key_id":"ABC123DEFG","team_id":"DEF123GHIJ","topic":"com.example.news"}"#),
                (
                    "ios",
                    #"{"p12":"\#(P12Fixtures.modern)","password":\#(json(secret("p12 password", P12Fixtures.password))),"topic":"com.example.news"}"#
                ),
                ("android", #"{"service_account":\#(account.json)}"#),
                (
                    "web",
                    #"{"subject":"mailto:ops@example.com","vapid_private_key":"\#(secret("VAPID key", Base64URL.encode(Array(vapid.rawRepresentation))))"}"#
                ),
                (
                    "windows",
                    #"{"client_id":"ms-app://s-1-15-2-1","client_secret":"\#(secret("WNS client secret", "wns-\(UUID().lowercasedString)"))"}"#
                ),
            ]
            _ = secret("p12 bundle", String(P12Fixtures.modern.prefix(48)))
            var android: (uuid: String, secret: String)?
            var ios: (uuid: String, secret: String)?
            for (index, credential) in credentials.enumerated() {
                let platform = try await api.call(
                    .POST, "/admin/v1/apps/\(appUUID)/platforms", headers: admin,
                    body: #"{"type":"\#(credential.type)","name":"p\#(index)","credentials":\#(credential.json)}"#, expect: .created)
                let platformSecret = secret("\(credential.type) platform secret", try #require(platform["secret"] as? String))
                if credential.type == "android" { android = (try #require(platform["uuid"] as? String), platformSecret) }
                if index == 0 { ios = (try #require(platform["uuid"] as? String), platformSecret) }
            }

            // A device on the FCM platform, and a push to it through the proxy.
            let (platformUUID, platformSecret) = try #require(android)
            let deviceToken = secret("device token", randomFCMToken())
            _ = try await api.call(
                .POST, "/v1/registration", headers: basic(platformUUID, platformSecret),
                body: #"{"registration_token":"\#(deviceToken)","os":"android","os_version":"14"}"#, expect: nil)
            // And one on the .p8 platform, so that an APNs provider token is signed and shared.
            let (iosUUID, iosSecret) = try #require(ios)
            _ = try await api.call(
                .POST, "/v1/registration", headers: basic(iosUUID, iosSecret),
                body: #"{"registration_token":"\#(secret("APNs device token", randomAPNsToken()))","os":"ios","os_version":"18"}"#,
                expect: nil)
            let apiKey = try #require(app["api_key"] as? String)
            let push = try await api.call(
                .POST, "/v1/push", headers: basic(appUUID, apiKey),
                body:
                    #"{"message":{"body":"\#(secret("message body", "Quarterly numbers \(UUID().uuidString)"))"},"target":{"platforms":["android","ios"]}}"#,
                expect: nil)
            let receipt = try #require(push["receipt_id"] as? String)
            try await api.waitUntilDone(receipt, headers: basic(appUUID, apiKey))
            let received = try #require(fcm.received.first)
            _ = secret("FCM access token", received.accessToken)
            _ = secret("APNs provider token", try #require(apns.providerTokens.first))
            #expect(apns.received.count == 1)
            #expect(proxy.tunnels.contains { $0.authorization != nil }, "the push went through the authenticated proxy")

            server.kill(SIGTERM)
            try await server.waitForExit()
            let written = server.output + server.fullErrors
            // The log is at trace level and holds the lines that used to carry secrets.
            #expect(written.contains(" trace "), "no trace line in:\n\(written.suffix(2000))")
            #expect(written.contains("Starting service"))
            for secret in secrets {
                #expect(!written.contains(secret.value), "the \(secret.name) was written: \(Self.context(of: secret.value, in: written))")
            }
        }
    }

    /// Some text around the first occurrence of `value`.
    static func context(of value: String, in text: String) -> String {
        guard let range = text.range(of: value) else { return "" }
        let start = text.index(range.lowerBound, offsetBy: -200, limitedBy: text.startIndex) ?? text.startIndex
        let end = text.index(range.upperBound, offsetBy: 100, limitedBy: text.endIndex) ?? text.endIndex
        return String(text[start..<end])
    }
}

/// JSON for a string.
private func json(_ text: String) -> String {
    String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
}

private func basic(_ user: String, _ password: String) -> [String: String] {
    ["Authorization": "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()]
}

/// Calls a running server's API.
private struct API {
    let port: Int

    func call(
        _ method: HTTPMethod, _ path: String, headers: [String: String], body: String? = nil, expect: HTTPResponseStatus?
    ) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let data = try await response.body.collect(upTo: 1 << 20)
        let accepted = expect.map { response.status == $0 } ?? (200..<300).contains(Int(response.status.code))
        guard accepted, let object = try JSONSerialization.jsonObject(with: Data(data.readableBytesView)) as? [String: Any] else {
            throw TestFailure(message: "\(method) \(path): \(response.status) \(String(buffer: data))")
        }
        return object
    }

    /// Polls the receipt until the push is done; fails past the deadline.
    func waitUntilDone(_ receipt: String, headers: [String: String], within deadline: Duration = .seconds(30)) async throws {
        let end = ContinuousClock.now + deadline
        var status: [String: Any] = [:]
        while ContinuousClock.now < end {
            status = try await call(.GET, "/v1/push/\(receipt)", headers: headers, expect: .ok)
            if status["status"] as? String == "done" { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure(message: "push \(receipt) did not finish in time: \(status)")
    }
}
