import Crypto
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing

/// Tokens, credentials, keys and bodies stay out of the logs unless `--log-sensitive`.
@Suite struct LogRedactionTests {
    /// Values that must not be logged, by what they are.
    struct Sensitive: Sendable {
        var values: [(name: String, value: String)] = []
        var deadToken = ""
    }

    @Test(arguments: Backend.available)
    func noTokenSecretKeyOrBodyIsLoggedAtTraceByDefault(_ backend: Backend) async throws {
        let logs = CapturedLogs()
        let sensitive = try await exercise(backend, logs: logs, sensitivity: .redacted)
        let text = logs.text
        #expect(!logs.all.isEmpty)
        for (name, value) in sensitive.values {
            #expect(!text.contains(value), "the \(name) was logged")
        }
        // The dead token's debug line is there, with a fingerprint instead of the token.
        #expect(text.contains(LogSensitivity.fingerprint(sensitive.deadToken)))
    }

    @Test func theTokenIsLoggedWithLogSensitive() async throws {
        let logs = CapturedLogs()
        let sensitive = try await exercise(.sqlite, logs: logs, sensitivity: .verbose)
        #expect(logs.text.contains(sensitive.deadToken))
    }

    /// Registers a device, uploads credentials, sends a push with a body to it (the provider says
    /// the token is dead), and makes a request with a wrong admin token, all logged at trace.
    private func exercise(_ backend: Backend, logs: CapturedLogs, sensitivity: LogSensitivity) async throws -> Sensitive {
        let observability = Observability(ObservabilityConfiguration(logSensitivity: sensitivity))
        let collected = Collected()
        try await DeliveryWorld.run(backend, .init(observability: observability, logger: logs.logger(level: .trace))) { world, client in
            var sensitive = Sensitive()
            let root = try await world.db.store.adminTokens.create(tenantID: nil, name: "root").1
            sensitive.values.append(("admin token", root))
            sensitive.values.append(("api key", world.fixture.apiKey))
            sensitive.values.append(("platform secret", world.fixture.platformSecret))
            let platformAuth = basic(world.fixture)
            sensitive.values.append(("authorization header", String(try #require(platformAuth[.authorization]).dropFirst("Basic ".count))))

            // A device registered through the API; the provider will call its token dead.
            let token = randomAPNsToken()
            let registered = try await client.execute(
                uri: "/v1/registration", method: .post, headers: platformAuth,
                body: body(#"{"registration_token":"\#(token)","os":"ios","os_version":"17.2"}"#))
            #expect(registered.status == .ok || registered.status == .created, "\(String(buffer: registered.body))")
            world.mock.update { $0.unregistered[token] = EpochClock.system.now.epochMilliseconds + 60_000 }
            sensitive.deadToken = token
            sensitive.values.append(("device token", token))

            // Credentials uploaded through the admin API.
            let key = P256.Signing.PrivateKey().pemRepresentation
            let keyLine = try #require(key.split(separator: "\n").dropFirst().first.map(String.init))
            sensitive.values.append(("p8 key", keyLine))
            let uploaded = try await client.execute(
                uri: "/admin/v1/apps/\(world.fixture.app.id.uuidString.lowercased())/platforms", method: .post, headers: bearer(root),
                body: body(
                    #"{"type":"ios","name":"second","credentials":{"p8":"\#(key.replacingOccurrences(of: "\n", with: "\\n"))","key_id":"ABC123DEFG","team_id":"DEF123GHIJ","topic":"com.example.news"}}"#
                ))
            #expect(uploaded.status == .created)
            if let secret = try uploaded.json()["secret"] as? String { sensitive.values.append(("new platform secret", secret)) }

            // A push with a body.
            let text = "Quarterly numbers \(UUID().uuidString)"
            sensitive.values.append(("message body", text))
            let receipt = try await world.send(#"{"message":{"body":"\#(text)"},"target":{"platforms":["ios"]}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["invalid_tokens"] as? Int == 1)

            // A wrong admin token.
            let wrong = "wrong-\(UUID().uuidString)"
            sensitive.values.append(("wrong admin token", wrong))
            #expect(try await client.execute(uri: "/admin/v1/apps", method: .get, headers: bearer(wrong)).status == .unauthorized)
            collected.set(sensitive)
        }
        return try #require(collected.value)
    }
}

/// Hands a value out of a `@Sendable` closure.
private final class Collected: Sendable {
    private let stored = Mutex<LogRedactionTests.Sensitive?>(nil)
    var value: LogRedactionTests.Sensitive? { stored.withLock { $0 } }
    func set(_ value: LogRedactionTests.Sensitive) { stored.withLock { $0 = value } }
}
