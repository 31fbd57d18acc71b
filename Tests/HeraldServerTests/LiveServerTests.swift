import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@Suite struct LiveServerTests {
    /// The PCF Android SDK streams its bodies (`Transfer-Encoding: chunked`, no Content-Length).
    @Test(arguments: Backend.available)
    func chunkedRegistrationBodiesAreAccepted(_ backend: Backend) async throws {
        try await ServerHarness.run(backend, setup: .live) { harness, client in
            let fixture = try await Fixture.make(harness.store, type: .android)
            let port = try #require(client.port)
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/registration")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(
                name: "Authorization",
                value: "Basic  "
                    + Data("\(fixture.platform.id.uuidString.lowercased()):\(fixture.platformSecret)".utf8).base64EncodedString())
            let parts = [#"{"registration_token":"fcm-token-1","#, #""os":"android-fcm","tags":["#, #""a","b"]}"#]
            request.body = .stream(parts.map { ByteBuffer(string: $0) }.async, length: .unknown)
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.status == .ok)
            let data = try await response.body.collect(upTo: 1 << 20)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(data.readableBytesView)) as? [String: Any])
            #expect((json["device_uuid"] as? String)?.isEmpty == false)
            #expect(try await harness.store.devices.count(platformID: fixture.platform.id) == 1)
        }
    }

    /// The zero-configuration start: a data directory with the SQLite file, an encryption key
    /// and a root admin token (both 0600); a second start reuses them.
    @Test func firstStartCreatesTheDataDirectoryAndAToken() async throws {
        let directory = NSTemporaryDirectory() + "herald-start-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = ServerConfiguration(dataDirectory: directory + "/data")
        let first = try await Bootstrap.open(configuration, logger: TestDatabase.logger)
        let token = try #require(first.generatedAdminToken)
        #expect(try await first.store.adminTokens.authenticate(token)?.tenantID == nil)
        #expect(try await first.store.tenants.find(name: Bootstrap.defaultTenantName) != nil)
        await first.store.database.shutdown()

        for file in ["admin-token", "encryption.key"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: "\(directory)/data/\(file)")
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file)")
        }
        let saved = try String(contentsOfFile: "\(directory)/data/admin-token", encoding: .utf8)
        #expect(saved.trimmingCharacters(in: .whitespacesAndNewlines) == token)
        #expect(FileManager.default.fileExists(atPath: "\(directory)/data/herald.sqlite"))

        let second = try await Bootstrap.open(configuration, logger: TestDatabase.logger)
        #expect(second.generatedAdminToken == nil)
        #expect(try await second.store.adminTokens.authenticate(token) != nil)
        await second.store.database.shutdown()
    }

    /// Credentials sealed with one key cannot be read with another.
    @Test func credentialsNeedTheEncryptionKeyTheyWereSealedWith() async throws {
        let directory = NSTemporaryDirectory() + "herald-key-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = SecretBox.generateEncodedKey()
        let opened = try await Bootstrap.open(
            ServerConfiguration(dataDirectory: directory, encryptionKey: key), logger: TestDatabase.logger)
        let fixture = try await Fixture.make(opened.store, type: .windows)
        await opened.store.database.shutdown()
        #expect(!FileManager.default.fileExists(atPath: directory + "/encryption.key"))

        let wrong = try await Bootstrap.open(
            ServerConfiguration(dataDirectory: directory, encryptionKey: SecretBox.generateEncodedKey()), logger: TestDatabase.logger)
        await #expect(throws: (any Error).self) { try await wrong.store.platforms.credentials(id: fixture.platform.id) }
        await wrong.store.database.shutdown()
        let right = try await Bootstrap.open(ServerConfiguration(dataDirectory: directory, encryptionKey: key), logger: TestDatabase.logger)
        #expect(try await right.store.platforms.credentials(id: fixture.platform.id)?.platformType == .windows)
        await right.store.database.shutdown()
    }
}
