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

/// `herald-dev bench fanout`: one broadcast (or, with `--topic`, one push to a topic every device is
/// subscribed to) to N devices, through a real `herald serve` process, to the provider mocks in
/// their own processes or to the independent h2o APNs sink; for iOS, then h2load against the
/// same endpoint for comparison.
struct FanoutBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Broadcast one push to N devices through `herald serve` and the provider mocks, and measure it.",
        discussion: """
            Registers N devices of --platform straight into a fresh store (SQLite in a temporary directory, or the
            PostgreSQL database given with --database-url), starts where the notifications go, runs `herald serve` as its
            own process, sends one broadcast, and prints notifications/s, time to last delivery, latency and the server's
            peak RSS. For iOS it then runs h2load (Debian package nghttp2-client) against the same endpoint with the same
            request shape and prints Herald's rate as a fraction of h2load's. CPU seconds (utime + stime) of the server
            over the broadcast, of h2load and of the h2o sink in each phase are printed per item too (and of the PostgreSQL
            server, when it runs on this machine): unlike the rates, they compare across hours on a shared host.
            --sink mock (default): Herald's own mocks (`herald-dev mock apns`, `fcm`, `webpush`, `wns`; all four for `mixed`,
            a quarter of the devices each), each in its own process, recording every arrival.
            --sink h2o: the independent APNs-shaped h2o endpoint (`--sink-script`, Debian packages h2o and
            nghttp2-client), timed from acceptance to its `GET /count` reaching N; h2load runs 4 connections × 100 streams.
            This is the headline fan-out figure.
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
    @Option(help: "The push's custom.ios.badge: a number, +N, -N or auto (autobadge: each device counted and rendered per number).")
    var badge: String?
    @Option(help: "Send to this audience expression (target.audience, JSON) instead; with --topic, the devices are still subscribed to it.")
    var audience: String?
    @Option(name: .customLong("database-url"), help: "postgres://… to benchmark PostgreSQL (a scratch database).")
    var databaseURL: String?
    @Option(help: "Delivery workers in the server.") var workers: Int = 4
    @Option(name: .customLong("mock-threads"), help: "Event-loop threads of the mock APNs.") var mockThreads: Int = 1
    @Option(name: .customLong("h2load-requests"), help: "Requests h2load sends (0 skips h2load).") var h2loadRequests: Int = 200_000
    @Option(name: .customLong("h2load-connections"), help: "h2load's connections (default 1 against the mock, 4 against h2o).")
    var h2loadConnections: Int?
    @Option(name: .customLong("h2load-streams"), help: "h2load's concurrent streams per connection.") var h2loadStreams: Int = 100
    @Option(name: .customLong("serve-args"), help: "Extra arguments for `herald serve`, space-separated.") var serveArguments: String = ""
    @Flag(help: "Keep the temporary directory (logs, database).") var keep = false
    @Option(help: "Where the notifications go: Herald's own provider mocks (mock), or the independent h2o APNs sink (h2o, iOS only).")
    var sink: Sink = .mock
    @Option(name: .customLong("sink-script"), help: "The h2o sink's run-sink script.")
    var sinkScript: String = "../shared/bench/h2o-apns-sink/run-sink"

    /// The endpoint the server delivers to.
    enum Sink: String, ExpressibleByArgument, CaseIterable {
        /// `herald-dev mock apns|fcm|webpush|wns`, one process per provider, with per-arrival timestamps.
        case mock
        /// h2o answering APNs requests (`--sink-script`): a server Herald did not write.
        case h2o
    }

    /// h2load's connections: the issue-18 request shape (4 × 100 streams) against h2o.
    private var effectiveH2LoadConnections: Int { h2loadConnections ?? (sink == .h2o ? 4 : 1) }

    func validate() throws {
        guard devices > 0 else { throw ValidationError("--devices must be at least 1") }
        guard sink == .mock || platform == .ios else { throw ValidationError("--sink h2o answers APNs requests only: use --platform ios") }
        if let audience {
            do {
                _ = try AudienceExpression.parse(
                    try JSONDecoder().decode(JSONValue.self, from: Data(audience.utf8)), path: "--audience")
            } catch let error as HeraldCore.ValidationError {
                throw ArgumentParser.ValidationError("--audience: \(error.message) at \(error.field ?? "--audience")")
            } catch {
                throw ArgumentParser.ValidationError("--audience is not JSON: \(error)")
            }
        }
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
        var audience = topic.map { "subscribed to topic '\($0)'" } ?? "broadcast"
        if let expression = self.audience { audience += ", audience \(expression)" }
        print(
            "herald-dev bench fanout: \(devices) \(platform.rawValue) devices (\(audience)), \(databaseURL == nil ? "SQLite" : "PostgreSQL"), \(workers) workers, sink \(sink.rawValue)"
        )
        print("load at start           \(ProcessCPU.loadAverage)")

        // The provider-token key the mock APNs verifies against.
        let signingKey = P256.Signing.PrivateKey()
        let keyPath = directory + "/key.p8"
        try signingKey.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)

        var children: [ChildProcess] = []
        var h2oSink: H2OSink?
        do {
            // MARK: Where the notifications go
            var targets: [SeedTarget] = []
            var mocks: [ProviderMock] = []
            var serverEnvironment = ["HERALD_EXTRA_CA_FILE": directory + "/ca.pem"]
            switch sink {
            case .mock:
                // The mocks, each in its own process.
                for (type, count) in Self.split(devices, among: platform.platforms) {
                    let mock = try await ProviderMock.start(
                        type, expecting: count, directory: directory, executable: executable, threads: mockThreads,
                        apnsKeyPath: keyPath, apnsKeyID: Self.apnsKeyID)
                    children.append(mock.process)
                    mocks.append(mock)
                    targets.append(
                        SeedTarget(
                            type: type, count: count,
                            credentials: try mock.credentials(apnsKey: signingKey, apnsKeyID: Self.apnsKeyID, topic: Self.apnsTopic),
                            deviceToken: mock.deviceToken))
                    serverEnvironment.merge(mock.serverEnvironment) { $1 }
                }
                // One file with every mock's CA, for HERALD_EXTRA_CA_FILE.
                try mocks.map(\.caPEM).joined(separator: "\n").write(toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
            case .h2o:
                let sinkDirectory = directory + "/h2o-sink"
                let started = try await H2OSink.start(script: sinkScript, directory: sinkDirectory)
                h2oSink = started
                print("h2o sink on \(started.url)")
                try started.caPEM.write(toFile: directory + "/ca.pem", atomically: true, encoding: .utf8)
                serverEnvironment["HERALD_APNS_ENDPOINT"] = started.url
                targets.append(
                    SeedTarget(
                        type: .ios, count: devices,
                        credentials: try ProviderMock.apnsCredentials(key: signingKey, keyID: Self.apnsKeyID, topic: Self.apnsTopic),
                        deviceToken: { _ in ProviderMock.randomAPNsToken() }))
            }

            // MARK: The store, seeded directly
            let encryptionKey = SecretBox.generateEncodedKey()
            let configuration = ServerConfiguration(
                dataDirectory: directory + "/data", databaseURL: databaseURL, encryptionKey: encryptionKey, adminToken: nil,
                logLevel: .warning)
            let seeded = try await seed(configuration, targets: targets)

            // MARK: The server, in its own process
            let port = try await BenchmarkServer.freePort()
            var serveArguments = [
                "serve", "--port", String(port), "--data-dir", directory + "/data", "--workers", String(workers), "--log-level", "warning",
            ]
            if let databaseURL { serveArguments += ["--database-url", databaseURL] }
            serveArguments += self.serveArguments.split(separator: " ").map(String.init)
            serverEnvironment["HERALD_ENCRYPTION_KEY"] = encryptionKey
            let server = try ChildProcess(
                name: "herald serve", executable: workspace.herald, arguments: serveArguments, environment: serverEnvironment,
                logPath: directory + "/serve.log")
            children.append(server)
            let base = "http://127.0.0.1:\(port)"
            try await BenchmarkServer.waitUntilServing(base, server: server)
            let idleRSS = server.memoryKiB("VmRSS") ?? 0

            // MARK: One broadcast
            // CPU seconds of the server and of h2o over the broadcast: per item, they compare with
            // h2load's in any hour, where wall-clock rates need a quiet host.
            let serveCPU = ProcessCPU.Span(pid: server.pid)
            let sinkCPU = ProcessCPU.Span(pid: h2oSink?.pid)
            let databaseCPU = ProcessCPU.Span(pid: seeded.postmaster, tree: true)
            let started = DispatchTime.now().uptimeNanoseconds
            let elapsedMilliseconds = { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6 }
            let receipt = try await sendBroadcast(base, seeded)
            var peakSampled = idleRSS
            // Against h2o there are no per-arrival timestamps: the sink's count is read every 10 ms.
            var firstSeen: Double?
            let deadline = ContinuousClock.now + .seconds(max(120, devices / 2000))
            while true {
                if let h2oSink {
                    let count = try await h2oSink.count()
                    if count > 0, firstSeen == nil { firstSeen = elapsedMilliseconds() }
                    if count >= devices { break }
                } else if mocks.allSatisfy({ $0.process.output.contains("accepted ") }) {
                    break
                }
                guard ContinuousClock.now < deadline else {
                    throw BenchmarkError(
                        "not every notification reached the \(sink.rawValue) sink in time; receipt \(receipt), logs in \(directory)")
                }
                guard server.isRunning else { throw BenchmarkError("the server exited; its output is in \(server.logPath)") }
                peakSampled = max(peakSampled, server.memoryKiB("VmRSS") ?? 0)
                try await Task.sleep(for: .milliseconds(h2oSink == nil ? 100 : 10))
            }
            let sinkDone = elapsedMilliseconds()
            let serveSeconds = serveCPU.elapsed()
            let sinkSeconds = sinkCPU.elapsed()
            let databaseSeconds = databaseCPU.elapsed()
            let peakRSS = max(peakSampled, server.memoryKiB("VmHWM") ?? 0)
            let status = try await pushStatus(base, seeded, receipt: receipt)
            await server.stop()

            let first: Double
            let last: Double
            let latencies: [Double]
            if h2oSink != nil {
                (first, last, latencies) = (firstSeen ?? sinkDone, sinkDone, [])
            } else {
                var arrivals: [Double] = []
                for mock in mocks {
                    arrivals += try readArrivals(mock.arrivalsPath).map { Double(Int64($0) - Int64(started)) / 1e6 }
                }
                arrivals.sort()
                guard let firstArrival = arrivals.first, let lastArrival = arrivals.last else {
                    throw BenchmarkError("the mocks recorded no arrivals")
                }
                (first, last, latencies) = (firstArrival, lastArrival, arrivals)
            }
            let rate = Double(devices) / (last / 1000)
            let steadyRate = last > first ? Double(devices - 1) / ((last - first) / 1000) : rate
            print("")
            print("push \(receipt): \(status)")
            print(String(format: "time to first delivery  %.0f ms", first))
            print(String(format: "time to last delivery   %.0f ms", last))
            print(String(format: "notifications/s         %.0f (accept → last delivery); %.0f from first to last", rate, steadyRate))
            if !latencies.isEmpty {
                print(
                    String(
                        format: "delivery latency        p50 %.0f ms, p99 %.0f ms (push accepted → provider received)",
                        BenchmarkServer.percentile(latencies, 0.50), BenchmarkServer.percentile(latencies, 0.99)))
            }
            print("server RSS              idle \(idleRSS / 1024) MiB, peak \(peakRSS / 1024) MiB")
            if let serveSeconds {
                let sink =
                    sinkSeconds.map { String(format: "; the h2o sink %.2f s, %.1f µs a request", $0, $0 * 1e6 / Double(devices)) } ?? ""
                print(
                    String(
                        format: "server CPU              %.2f s over the broadcast, %.1f µs a notification", serveSeconds,
                        serveSeconds * 1e6 / Double(devices)) + sink)
            }
            if let databaseSeconds {
                print(
                    String(
                        format: "PostgreSQL CPU          %.2f s over the broadcast, %.1f µs a notification (its server, on the same cores)",
                        databaseSeconds, databaseSeconds * 1e6 / Double(devices)))
            }

            // MARK: h2load against the same endpoint
            if h2loadRequests > 0, platform == .ios, let endpoint = h2oSink?.url ?? mocks.first?.url {
                // h2load is waited for by this process, so its CPU shows in the children's usage.
                let childrenBefore = ProcessCPU.childrenSeconds()
                let sinkCPU = ProcessCPU.Span(pid: h2oSink?.pid)
                let h2load = try await runH2Load(
                    endpointURL: endpoint, signingKey: signingKey, keyID: Self.apnsKeyID, topic: seeded.topic, receipt: receipt,
                    directory: directory)
                let h2loadSeconds = ProcessCPU.childrenSeconds() - childrenBefore
                let sinkSeconds = sinkCPU.elapsed()
                print(
                    String(
                        format: "h2load                  %.0f req/s (-c %d -m %d, %d requests)", h2load, effectiveH2LoadConnections,
                        h2loadStreams, h2loadRequests))
                let perRequest = h2loadSeconds * 1e6 / Double(h2loadRequests)
                let sink =
                    sinkSeconds.map { String(format: "; the h2o sink %.2f s, %.1f µs a request", $0, $0 * 1e6 / Double(h2loadRequests)) }
                    ?? ""
                print(String(format: "h2load CPU              %.2f s, %.1f µs a request", h2loadSeconds, perRequest) + sink)
                if let serveSeconds, perRequest > 0 {
                    print(
                        String(
                            format: "CPU herald / h2load     %.1f (per notification / per request)",
                            serveSeconds * 1e6 / Double(devices) / perRequest))
                }
                // Against h2o the issue-18 figure: acceptance to the sink's count reaching N. Against
                // the mock, as before: first to last arrival.
                let compared = h2oSink == nil ? steadyRate : rate
                print(String(format: "herald / h2load         %.2f", compared / h2load))
            }
        } catch {
            for child in children { await child.stop(grace: .seconds(2)) }
            await h2oSink?.stop()
            throw error
        }
        for child in children { await child.stop(grace: .seconds(2)) }
        await h2oSink?.stop()
        print("load at end             \(ProcessCPU.loadAverage)")
    }

    static let apnsKeyID = "BENCHKEY01"
    static let apnsTopic = "com.example.bench"

    /// One platform to seed: its type, how many devices, the credentials its endpoint accepts and
    /// each device's registration token.
    struct SeedTarget {
        let type: PlatformType
        let count: Int
        let credentials: PlatformCredentials
        let deviceToken: (Int) -> String
    }

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
        /// The PostgreSQL server's postmaster, when it runs on this machine: its CPU is counted too.
        var postmaster: Int32?
    }

    private func seed(_ configuration: ServerConfiguration, targets: [SeedTarget]) async throws -> Seeded {
        var logger = Logger(label: "herald.bench")
        logger.logLevel = .warning
        let opened = try await Bootstrap.open(configuration, logger: logger)
        let store = opened.store
        do {
            let topic = Self.apnsTopic
            guard let tenant = try await store.tenants.create(name: "bench-\(UUID().uuidString.prefix(8))") else {
                throw BenchmarkError("could not create the benchmark's tenant")
            }
            let (app, apiKey) = try await store.applications.create(
                tenantID: tenant.id, name: "bench", description: "herald-dev bench fanout")
            let subscriptions = try self.topic.map { try RegistrationInput.normalizedTags([$0], field: "--topic") } ?? []
            let clock = ContinuousClock.now
            for target in targets {
                let (platform, _) = try await store.platforms.create(
                    applicationID: app.id, name: target.type.rawValue, type: target.type, credentials: target.credentials)
                let chunk = 50_000
                for start in stride(from: 0, to: target.count, by: chunk) {
                    let registrations = (start..<min(start + chunk, target.count)).map { index in
                        Registration(
                            os: target.type.rawValue, registrationToken: target.deviceToken(index), osVersion: .unchanged,
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
            var seeded = Seeded(appID: app.id, apiKey: apiKey, topic: topic)
            if store.database.dialect == .postgres, let backend = try await store.database.query("SELECT pg_backend_pid() AS pid").first {
                // This session's backend is a child of the postmaster; on another machine there is
                // no such process here, and its CPU goes uncounted.
                seeded.postmaster = ProcessCPU.parent(of: Int32(try backend.int("pid")))
            }
            await store.database.shutdown()
            return seeded
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

    /// The push sent: the broadcast, the same message to `--topic` or to `--audience`; with
    /// `--badge`, its iOS badge.
    var pushBody: String {
        var message: [String: Any] = ["body": "Hello from the Herald benchmark"]
        if let badge { message["custom"] = ["ios": ["badge": Int(badge).map { $0 as Any } ?? badge]] }
        let target: [String: Any]
        if let audience, let expression = try? JSONSerialization.jsonObject(with: Data(audience.utf8)) {
            target = ["audience": expression]
        } else {
            target = topic.map { ["topics": [$0]] } ?? ["platform": "all"]
        }
        let data = (try? JSONSerialization.data(withJSONObject: ["message": message, "target": target], options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
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

    /// h2load's request rate against the endpoint Herald sent to, with the request Herald sends:
    /// same path shape, headers, provider token and payload.
    private func runH2Load(
        endpointURL: String, signingKey: P256.Signing.PrivateKey, keyID: String, topic: String, receipt: String, directory: String
    ) async throws -> Double {
        guard let h2load = ["/usr/bin/h2load", "/usr/local/bin/h2load"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            throw BenchmarkError("h2load is not installed (apt-get install -y nghttp2-client), or pass --h2load-requests 0")
        }
        let credentials = APNsTokenCredentials(
            privateKeyPEM: signingKey.pemRepresentation, keyID: keyID, teamID: "BENCHTEAM1", topic: topic, environment: .production)
        let token = try APNsTokenGenerator(credentials: credentials).token(issuedAt: Int64(Date().timeIntervalSince1970))
        let input = try JSONDecoder().decode(PushInput.self, from: Data(pushBody.utf8))
        guard let notification = try APNsRenderer.render(try input.validated(now: 0), receiptID: receipt) else {
            throw BenchmarkError("the broadcast renders no APNs payload")
        }
        let payloadPath = directory + "/payload.json"
        try Data(notification.payload).write(to: URL(fileURLWithPath: payloadPath))
        let deviceToken = ProviderMock.randomAPNsToken()
        let process = try ChildProcess(
            name: "h2load", executable: h2load,
            arguments: [
                "-n", String(h2loadRequests), "-c", String(effectiveH2LoadConnections), "-m", String(h2loadStreams), "-t", "1",
                "-H", "apns-topic: \(topic)", "-H", "apns-push-type: \(notification.pushType.rawValue)",
                "-H", "apns-priority: \(notification.priority)", "-H", "apns-id: \(UUID().lowercasedString)",
                "-H", "authorization: bearer \(token)", "-d", payloadPath, "\(endpointURL)/3/device/\(deviceToken)",
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
