import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `herald serve` process, killed and stopped while it delivers a broadcast to the
/// mock APNs (in this process, over TLS), then started again on the same database.
@Suite(.serialized) struct ServerProcessTests {
    /// A database with an app and an iOS platform, the mock APNs, and how to start `herald serve`
    /// on both.
    struct Setup {
        let db: TestDatabase
        let mock: MockAPNsServer
        let fixture: Fixture
        let environment: [String: String]

        /// Starts `herald serve` on the setup's database.
        func start(_ arguments: [String], name: String) async throws -> HeraldProcess {
            var database = ["--data-dir", db.directory]
            if let url = db.databaseURL { database += ["--database-url", url] }
            return try await HeraldProcess(arguments + database, environment: environment, logDirectory: db.directory, name: name)
        }

        /// Registers `count` devices straight into the store; returns their tokens.
        func seed(_ count: Int) async throws -> [String] {
            let registrations = try (0..<count).map { _ in
                try RegistrationInput(registrationToken: randomAPNsToken()).validated(for: .ios, requireToken: true)
            }
            var tokens: [String] = []
            for chunk in stride(from: 0, to: count, by: 200) {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for registration in registrations[chunk..<min(count, chunk + 200)] {
                        group.addTask { try await db.store.devices.register(on: fixture.platform, registration).registrationToken }
                    }
                    for try await token in group { tokens.append(token) }
                }
            }
            return tokens
        }

        func request(_ method: HTTPMethod, _ path: String, port: Int, body: String? = nil) async throws -> [String: Any] {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.method = method
            let credentials = Data("\(fixture.app.id.uuidString.lowercased()):\(fixture.apiKey)".utf8).base64EncodedString()
            request.headers.add(name: "Authorization", value: "Basic \(credentials)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
            }
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let data = try await response.body.collect(upTo: 1 << 20)
            guard response.status == .ok,
                let json = try JSONSerialization.jsonObject(with: Data(data.readableBytesView)) as? [String: Any]
            else {
                throw TestFailure(message: "\(method) \(path): \(response.status) \(String(buffer: data))")
            }
            return json
        }

        func broadcast(port: Int) async throws -> String {
            let json = try await request(
                .POST, "/v1/push", port: port, body: #"{"message":{"body":"Town Hall"},"target":{"platform":"ios"}}"#)
            guard let receipt = json["receipt_id"] as? String else { throw TestFailure(message: "no receipt: \(json)") }
            return receipt
        }

        /// Polls the receipt until the push is done; fails past the deadline.
        func finished(_ receipt: String, port: Int, within deadline: Duration = .seconds(30)) async throws -> [String: Any] {
            let end = ContinuousClock.now + deadline
            var status: [String: Any] = [:]
            while ContinuousClock.now < end {
                status = try await request(.GET, "/v1/push/\(receipt)", port: port)
                if status["status"] as? String == "done" { return status }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestFailure(message: "push \(receipt) did not finish in time: \(status)")
        }

        /// Delivery jobs some worker holds.
        func claimedJobs() async throws -> Int64 {
            try await db.database.query("SELECT COUNT(*) AS n FROM push_jobs WHERE state = 'claimed'").first?.int("n") ?? 0
        }
    }

    func withSetup(_ backend: Backend, _ body: (Setup) async throws -> Void) async throws {
        let tls = try MockTLS()
        let key = P256.Signing.PrivateKey()
        var behavior = MockAPNsServer.Behavior()
        behavior.signingKeys = ["ABC123DEFG": key.publicKey]
        let mock = MockAPNsServer(tls: tls, behavior: behavior, threads: 2)
        let port = try await mock.start()
        do {
            try await withTestDatabase(backend) { db in
                let caFile = db.directory + "/mock-apns-ca.pem"
                try tls.caCertificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
                let tenant = try #require(try await db.store.tenants.create(name: "t"))
                let (app, apiKey) = try await db.store.applications.create(tenantID: tenant.id, name: "News", description: "")
                let credentials = try CredentialsInput(
                    p8: key.pemRepresentation, keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.example.news"
                ).validate(for: .ios)
                let (platform, secret) = try await db.store.platforms.create(
                    applicationID: app.id, name: "ios", type: .ios, credentials: credentials)
                let environment = [
                    // The test store's key (TestDatabase), so that the server can open the credentials.
                    "HERALD_ENCRYPTION_KEY": Data(repeating: 7, count: 32).base64EncodedString(),
                    "HERALD_APNS_ENDPOINT": "https://127.0.0.1:\(port)",
                    "HERALD_EXTRA_CA_FILE": caFile,
                ]
                try await body(
                    Setup(
                        db: db, mock: mock, fixture: Fixture(app: app, apiKey: apiKey, platform: platform, platformSecret: secret),
                        environment: environment))
            }
        } catch {
            await mock.shutdown()
            throw error
        }
        await mock.shutdown()
    }

    /// Runs `body` with a server process, which is killed if `body` fails.
    func withServer(_ servers: HeraldProcess..., body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            for server in servers { server.kill(SIGKILL) }
            let logs = servers.map { "--- \($0.name)'s log:\n\($0.errors)" }.joined(separator: "\n")
            throw TestFailure(message: "\(error)\n\(logs)")
        }
    }

    static let workers = 2
    static let batchSize = 50

    /// `kill -9` in the middle of a broadcast, then a new start on the same database: every
    /// device gets the push, the receipt's counters are exact, and the only duplicates are the
    /// batches that were in flight (at most workers × batch size).
    @Test(arguments: Backend.available)
    func aKilledServerResumesWhereItWasAndLosesNothing(_ backend: Backend) async throws {
        try await withSetup(backend) { setup in
            let devices = 2000
            let tokens = try await setup.seed(devices)
            setup.mock.update { $0.responseDelay = .milliseconds(20) }
            let arguments = ["--workers", "\(Self.workers)", "--batch-size", "\(Self.batchSize)", "--job-lease", "3"]

            let first = try await setup.start(arguments, name: "first")
            var receipt = ""
            try await withServer(first) {
                receipt = try await setup.broadcast(port: first.port)
                try await DeliveryWorld.poll("the mock has received part of the push") {
                    setup.mock.received.count >= devices / 10
                }
                first.kill(SIGKILL)
                let (_, reason) = try await first.waitForExit()
                #expect(reason == .uncaughtSignal)
            }
            let atKill = setup.mock.received.count
            #expect(atKill < devices, "the push was over before the kill: the test proves nothing")

            setup.mock.update { $0.responseDelay = .milliseconds(1) }
            let second = try await setup.start(arguments, name: "second")
            try await withServer(second) {
                let status = try await setup.finished(receipt, port: second.port)
                #expect(status["targeted"] as? Int == devices)
                #expect(status["delivered"] as? Int == devices)
                #expect(status["failed"] as? Int == 0)
                #expect(status["pending"] as? Int == 0)
                let received = setup.mock.received.map(\.deviceToken)
                #expect(Set(received) == Set(tokens))
                let duplicates = received.count - Set(received).count
                #expect(duplicates <= Self.workers * Self.batchSize, "\(duplicates) duplicates")
                second.kill(SIGTERM)
                #expect(try await second.waitForExit().status == 0)
            }
        }
    }

    /// SIGTERM while answers are slow: the server sends nothing new, waits for the answers in
    /// flight, records them, puts the rest back and exits 0 at once. Started again, it sends the
    /// rest: every device exactly once.
    @Test(arguments: Backend.available)
    func sigtermFinishesTheBatchesInFlightAndExitsPromptly(_ backend: Backend) async throws {
        try await withSetup(backend) { setup in
            let devices = 400
            let tokens = try await setup.seed(devices)
            setup.mock.update { $0.responseDelay = .milliseconds(300) }
            // The default lease (30 s) is longer than the test waits: no job may be left claimed.
            let arguments = ["--workers", "\(Self.workers)", "--batch-size", "20"]

            let first = try await setup.start(arguments, name: "first")
            var receipt = ""
            try await withServer(first) {
                receipt = try await setup.broadcast(port: first.port)
                try await DeliveryWorld.poll("the mock has requests in flight") { setup.mock.statistics.requests >= 20 }
                let signalled = ContinuousClock.now
                first.kill(SIGTERM)
                let (status, reason) = try await first.waitForExit(within: .seconds(20))
                let took = ContinuousClock.now - signalled
                #expect(reason == .exit)
                #expect(status == 0, "exit status \(status)")
                #expect(took < .seconds(10), "the shutdown took \(took)")
            }
            let statistics = setup.mock.statistics
            #expect(statistics.answered == statistics.requests, "requests in flight were abandoned")
            let before = setup.mock.received.count
            #expect(before < devices, "the push was over before the SIGTERM: the test proves nothing")
            #expect(try await setup.claimedJobs() == 0)

            setup.mock.update { $0.responseDelay = .zero }
            let second = try await setup.start(arguments, name: "second")
            try await withServer(second) {
                let status = try await setup.finished(receipt, port: second.port, within: .seconds(25))
                #expect(status["delivered"] as? Int == devices)
                #expect(status["pending"] as? Int == 0)
                let received = setup.mock.received.map(\.deviceToken)
                #expect(received.count == devices, "\(received.count - Set(received).count) sent twice")
                #expect(Set(received) == Set(tokens))
                second.kill(SIGTERM)
                #expect(try await second.waitForExit().status == 0)
            }
        }
    }
}
