import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import HeraldAPNs
import HeraldCore
import HeraldServer
import HeraldStore
import Logging
import NIOCore
import NIOPosix

/// `herald bench fanout`: one broadcast (or, with `--topic`, one push to a topic every device is
/// subscribed to) to N devices, through a real `herald serve` process, to the provider mocks in
/// their own processes; for iOS, then h2load against the same mock for comparison.
struct FanoutBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Broadcast one push to N devices through `herald serve` and the provider mocks, and measure it.",
        discussion: """
            Registers N devices of --platform straight into a fresh store (SQLite in a temporary directory, or the
            PostgreSQL database given with --database-url), starts the provider's mock (`herald mock apns`, `fcm`,
            `webpush` or `wns`; all four for `mixed`, a quarter of the devices each) and `herald serve` as their own
            processes, sends one broadcast, and prints notifications/s, time to last delivery, delivery latency
            percentiles and the server's peak RSS. For iOS it then runs h2load (Debian package nghttp2-client)
            against the same mock with the same request shape and prints Herald's rate as a fraction of h2load's.
            Build with `swift build -c release` first and run the release binary.
            """)

    /// Whose devices the broadcast reaches.
    enum Audience: String, ExpressibleByArgument, CaseIterable {
        case ios, android, web, windows, mixed

        var platforms: [PlatformType] {
            switch self {
            case .ios: [.ios]
            case .android: [.android]
            case .web: [.web]
            case .windows: [.windows]
            case .mixed: [.ios, .android, .web, .windows]
            }
        }
    }

    @Option(help: "Devices to register and send to.") var devices: Int = 100_000
    @Option(help: "Their platform: ios, android, web, windows, or mixed (a quarter each).") var platform: Audience = .ios
    @Option(help: "Subscribe every device to this topic and target the topic instead of broadcasting.")
    var topic: String?
    @Option(name: .customLong("database-url"), help: "postgres://… to benchmark PostgreSQL (a scratch database).")
    var databaseURL: String?
    @Option(help: "Delivery workers in the server.") var workers: Int = 4
    @Option(name: .customLong("mock-threads"), help: "Event-loop threads of the mock APNs.") var mockThreads: Int = 1
    @Option(name: .customLong("h2load-requests"), help: "Requests h2load sends (0 skips h2load).") var h2loadRequests: Int = 200_000
    @Option(name: .customLong("h2load-connections"), help: "h2load's connections.") var h2loadConnections: Int = 1
    @Option(name: .customLong("h2load-streams"), help: "h2load's concurrent streams per connection.") var h2loadStreams: Int = 100
    @Option(name: .customLong("serve-args"), help: "Extra arguments for `herald serve`, space-separated.") var serveArguments: String = ""
    @Flag(help: "Keep the temporary directory (logs, database).") var keep = false

    func validate() throws {
        guard devices > 0 else { throw ValidationError("--devices must be at least 1") }
        if let topic {
            do {
                _ = try RegistrationInput.normalizedTags([topic], field: "--topic")
            } catch {
                throw ArgumentParser.ValidationError("--topic: \(error.message)")
            }
        }
    }

    func run() async throws {
        let workspace = try BenchmarkWorkspace()
        defer { workspace.finish(keep: keep) }
        let (executable, directory) = (workspace.executable, workspace.directory)
        let audience = topic.map { "subscribed to topic '\($0)'" } ?? "broadcast"
        print(
            "herald bench fanout: \(devices) \(platform.rawValue) devices (\(audience)), \(databaseURL == nil ? "SQLite" : "PostgreSQL"), \(workers) workers")

        // The provider-token key the mock APNs verifies against.
        let signingKey = P256.Signing.PrivateKey()
        let keyPath = directory + "/key.p8"
        try signingKey.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)

        var children: [ChildProcess] = []
        do {
            // MARK: The mocks, each in its own process
            let shares = Self.split(devices, among: platform.platforms)
            var mocks: [ProviderMock] = []
            for (type, count) in shares {
                let mock = try await ProviderMock.start(
                    type, expecting: count, directory: directory, executable: executable, threads: mockThreads, apnsKeyPath: keyPath,
                    apnsKeyID: Self.apnsKeyID)
                children.append(mock.process)
                mocks.append(mock)
            }
            // One file with every mock's CA, for HERALD_EXTRA_CA_FILE.
            let caPath = directory + "/ca.pem"
            try mocks.map(\.caPEM).joined(separator: "\n").write(toFile: caPath, atomically: true, encoding: .utf8)

            // MARK: The store, seeded directly
            let encryptionKey = SecretBox.generateEncodedKey()
            let configuration = ServerConfiguration(
                dataDirectory: directory + "/data", databaseURL: databaseURL, encryptionKey: encryptionKey, adminToken: nil,
                logLevel: .warning)
            let seeded = try await seed(configuration, mocks: mocks, signingKey: signingKey)

            // MARK: The server, in its own process
            let port = try await BenchmarkServer.freePort()
            var serveArguments = [
                "serve", "--port", String(port), "--data-dir", directory + "/data", "--workers", String(workers), "--log-level", "warning",
            ]
            if let databaseURL { serveArguments += ["--database-url", databaseURL] }
            serveArguments += self.serveArguments.split(separator: " ").map(String.init)
            var environment = ["HERALD_ENCRYPTION_KEY": encryptionKey, "HERALD_EXTRA_CA_FILE": caPath]
            for mock in mocks { environment.merge(mock.serverEnvironment) { $1 } }
            let server = try ChildProcess(
                name: "herald serve", executable: executable, arguments: serveArguments, environment: environment,
                logPath: directory + "/serve.log")
            children.append(server)
            let base = "http://127.0.0.1:\(port)"
            try await BenchmarkServer.waitUntilServing(base, server: server)
            let idleRSS = server.memoryKiB("VmRSS") ?? 0

            // MARK: One broadcast
            let started = DispatchTime.now().uptimeNanoseconds
            let receipt = try await sendBroadcast(base, seeded)
            var peakSampled = idleRSS
            let deadline = ContinuousClock.now + .seconds(max(120, devices / 2000))
            while !mocks.allSatisfy({ $0.process.output.contains("accepted ") }) {
                guard ContinuousClock.now < deadline else {
                    throw BenchmarkError("not every notification reached the mocks in time; receipt \(receipt), logs in \(directory)")
                }
                guard server.isRunning else { throw BenchmarkError("the server exited; its output is in \(server.logPath)") }
                peakSampled = max(peakSampled, server.memoryKiB("VmRSS") ?? 0)
                try await Task.sleep(for: .milliseconds(100))
            }
            let peakRSS = max(peakSampled, server.memoryKiB("VmHWM") ?? 0)
            let status = try await pushStatus(base, seeded, receipt: receipt)
            await server.stop()

            var arrivals: [Double] = []
            for mock in mocks {
                arrivals += try readArrivals(mock.arrivalsPath).map { Double(Int64($0) - Int64(started)) / 1e6 }
            }
            arrivals.sort()
            guard let first = arrivals.first, let last = arrivals.last else { throw BenchmarkError("the mocks recorded no arrivals") }
            let rate = Double(devices) / (last / 1000)
            let steadyRate = arrivals.count > 1 ? Double(arrivals.count - 1) / ((last - first) / 1000) : rate
            print("")
            print("push \(receipt): \(status)")
            print(String(format: "time to first delivery  %.0f ms", first))
            print(String(format: "time to last delivery   %.0f ms", last))
            print(String(format: "notifications/s         %.0f (accept → last delivery); %.0f from first to last", rate, steadyRate))
            print(String(format: "delivery latency        p50 %.0f ms, p99 %.0f ms (push accepted → provider received)",
                         BenchmarkServer.percentile(arrivals, 0.50), BenchmarkServer.percentile(arrivals, 0.99)))
            print("server RSS              idle \(idleRSS / 1024) MiB, peak \(peakRSS / 1024) MiB")

            // MARK: h2load against the same mock APNs
            if h2loadRequests > 0, platform == .ios, let apns = mocks.first {
                let h2load = try await runH2Load(
                    mockURL: apns.url, signingKey: signingKey, keyID: Self.apnsKeyID, topic: seeded.topic, receipt: receipt,
                    directory: directory, executable: executable)
                print(String(format: "h2load                  %.0f req/s (-c %d -m %d, %d requests)", h2load, h2loadConnections, h2loadStreams, h2loadRequests))
                print(String(format: "herald / h2load         %.2f", steadyRate / h2load))
            }
        } catch {
            for child in children { await child.stop(grace: .seconds(2)) }
            throw error
        }
        for child in children { await child.stop(grace: .seconds(2)) }
    }

    static let apnsKeyID = "BENCHKEY01"

    /// `total` devices shared among `platforms`, the first taking the remainder.
    static func split(_ total: Int, among platforms: [PlatformType]) -> [(PlatformType, Int)] {
        let each = total / platforms.count
        return platforms.enumerated().map { index, type in (type, index == 0 ? total - each * (platforms.count - 1) : each) }
    }

    // MARK: Steps

    struct Seeded {
        let appID: UUID
        let apiKey: String
        let topic: String
    }

    private func seed(_ configuration: ServerConfiguration, mocks: [ProviderMock], signingKey: P256.Signing.PrivateKey) async throws -> Seeded {
        var logger = Logger(label: "herald.bench")
        logger.logLevel = .warning
        let opened = try await Bootstrap.open(configuration, logger: logger)
        let store = opened.store
        do {
            let topic = "com.example.bench"
            guard let tenant = try await store.tenants.create(name: "bench-\(UUID().uuidString.prefix(8))") else {
                throw BenchmarkError("could not create the benchmark's tenant")
            }
            let (app, apiKey) = try await store.applications.create(tenantID: tenant.id, name: "bench", description: "herald bench fanout")
            let subscriptions = try self.topic.map { try RegistrationInput.normalizedTags([$0], field: "--topic") } ?? []
            let clock = ContinuousClock.now
            for mock in mocks {
                let credentials = try mock.credentials(apnsKey: signingKey, apnsKeyID: Self.apnsKeyID, topic: topic)
                let (platform, _) = try await store.platforms.create(
                    applicationID: app.id, name: mock.type.rawValue, type: mock.type, credentials: credentials)
                let chunk = 50_000
                for start in stride(from: 0, to: mock.expected, by: chunk) {
                    let registrations = (start..<min(start + chunk, mock.expected)).map { index in
                        Registration(
                            os: mock.type.rawValue, registrationToken: mock.deviceToken(index), osVersion: .unchanged,
                            deviceAlias: .unchanged, deviceModel: .unchanged, deviceManufacturer: .unchanged, customUserID: .unchanged,
                            tags: .replace(subscriptions))
                    }
                    try await store.devices.importRegistrations(on: platform, registrations)
                }
            }
            print("registered \(devices) devices in \(ContinuousClock.now - clock)")
            if store.database.dialect == .postgres {
                // A deployment's devices arrive over days and autovacuum keeps the planner's
                // statistics current; a table filled a second ago has none (it looks empty), and
                // PostgreSQL then sorts the app's whole audience for every page. Analyzing now
                // measures the steady state.
                try await store.database.query("ANALYZE devices")
                try await store.database.query("ANALYZE device_tags")
            }
            await store.database.shutdown()
            return Seeded(appID: app.id, apiKey: apiKey, topic: topic)
        } catch {
            await store.database.shutdown()
            throw error
        }
    }



    private func basic(_ seeded: Seeded) -> String {
        "Basic " + Data("\(seeded.appID.lowercasedString):\(seeded.apiKey)".utf8).base64EncodedString()
    }

    private func sendBroadcast(_ base: String, _ seeded: Seeded) async throws -> String {
        var request = HTTPClientRequest(url: base + "/v1/push")
        request.method = .POST
        request.headers.add(name: "Authorization", value: basic(seeded))
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: pushBody))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok,
            let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let receipt = json["receipt_id"] as? String
        else {
            throw BenchmarkError("the push was refused: \(response.status) \(String(buffer: body))")
        }
        return receipt
    }

    static let broadcastBody = #"{"message":{"body":"Hello from the Herald benchmark"},"target":{"platform":"all"}}"#

    /// The push sent: the broadcast, or the same message to `--topic`.
    var pushBody: String {
        guard let topic else { return Self.broadcastBody }
        let target = String(decoding: (try? JSONSerialization.data(withJSONObject: ["topics": [topic]])) ?? Data(), as: UTF8.self)
        return #"{"message":{"body":"Hello from the Herald benchmark"},"target":"# + target + "}"
    }

    private func pushStatus(_ base: String, _ seeded: Seeded, receipt: String) async throws -> String {
        var request = HTTPClientRequest(url: base + "/v1/push/" + receipt)
        request.headers.add(name: "Authorization", value: basic(seeded))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return String(buffer: try await response.body.collect(upTo: 1 << 20))
    }

    private func readArrivals(_ path: String) throws -> [UInt64] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { raw in
            (0..<(raw.count / 8)).map { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
        }
    }


    /// h2load's request rate against the mock, with the request Herald sends: same path shape,
    /// headers, provider token and payload.
    private func runH2Load(
        mockURL: String, signingKey: P256.Signing.PrivateKey, keyID: String, topic: String, receipt: String, directory: String,
        executable: String
    ) async throws -> Double {
        guard let h2load = ["/usr/bin/h2load", "/usr/local/bin/h2load"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchmarkError("h2load is not installed (apt-get install -y nghttp2-client), or pass --h2load-requests 0")
        }
        let credentials = APNsTokenCredentials(privateKeyPEM: signingKey.pemRepresentation, keyID: keyID, teamID: "BENCHTEAM1", topic: topic, environment: .production)
        let token = try APNsTokenGenerator(credentials: credentials).token(issuedAt: Int64(Date().timeIntervalSince1970))
        let input = try JSONDecoder().decode(PushInput.self, from: Data(pushBody.utf8))
        guard let notification = try APNsRenderer.render(try input.validated(now: 0), receiptID: receipt) else {
            throw BenchmarkError("the broadcast renders no APNs payload")
        }
        let payloadPath = directory + "/payload.json"
        try Data(notification.payload).write(to: URL(fileURLWithPath: payloadPath))
        let deviceToken = Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        let process = try ChildProcess(
            name: "h2load", executable: h2load,
            arguments: [
                "-n", String(h2loadRequests), "-c", String(h2loadConnections), "-m", String(h2loadStreams), "-t", "1",
                "-H", "apns-topic: \(topic)", "-H", "apns-push-type: \(notification.pushType.rawValue)",
                "-H", "apns-priority: \(notification.priority)", "-H", "apns-id: \(UUID().lowercasedString)",
                "-H", "authorization: bearer \(token)", "-d", payloadPath, "\(mockURL)/3/device/\(deviceToken)",
            ],
            logPath: directory + "/h2load.log")
        let status = try await process.waitForExit(timeout: .seconds(600))
        let output = process.output
        guard status == 0,
            let line = output.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
            let rate = line.split(separator: ",").dropFirst().first?.split(separator: " ").first.flatMap({ Double($0) })
        else {
            throw BenchmarkError("h2load failed (status \(status)):\n\(output)")
        }
        let succeeded = output.contains("\(h2loadRequests) succeeded") ? "" : " (not every request succeeded: see \(process.logPath))"
        if !succeeded.isEmpty { print("h2load: \(succeeded)") }
        return rate
    }
}
