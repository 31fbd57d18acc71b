import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import Logging
import NIOCore
import NIOPosix

/// `herald-dev bench schedules`: N scheduled pushes spread over a time span, through a real
/// `herald serve` process; then how late each fired.
struct ScheduleBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedules",
        abstract: "Schedule N pushes spread over a span through `herald serve` and measure how late they fire.",
        discussion: """
            Creates an app in a fresh store (SQLite in a temporary directory, or the PostgreSQL database given with
            --database-url), starts `herald serve --send-immediately-within 0`, creates N schedules through
            POST /v1/push whose times are spread evenly over --over seconds (starting --lead seconds after the
            run begins), waits for the last one, stops the server and reads when each fired. Lateness is
            fired_at − due time, fired_at being the moment the firing transaction began. Build with
            `swift build -c release` first and run the release binary.
            """)

    @Option(help: "Schedules to create.") var count: Int = 10_000
    @Option(help: "Seconds the schedules' times are spread over.") var over: Int = 60
    @Option(help: "Seconds from the start to the first schedule's time (room to create them all).") var lead: Int = 30
    @Option(help: "Concurrent requests while creating.") var concurrency: Int = 16
    @Option(name: .customLong("database-url"), help: "postgres://… to benchmark PostgreSQL (a scratch database).")
    var databaseURL: String?
    @Option(help: "Herald processes serving (and firing) on the database; more than 1 needs --database-url.")
    var servers: Int = 1
    @Flag(help: "Keep the temporary directory (logs, database).") var keep = false

    func validate() throws {
        guard count > 0, over >= 0, lead > 0, concurrency > 0 else {
            throw ValidationError("--count, --lead and --concurrency must be positive")
        }
        guard servers == 1 || databaseURL != nil else { throw ValidationError("--servers above 1 needs --database-url") }
    }

    func run() async throws {
        let workspace = try BenchmarkWorkspace()
        defer { workspace.finish(keep: keep) }
        let directory = workspace.directory
        print(
            "herald-dev bench schedules: \(count) schedules over \(over) s, \(databaseURL == nil ? "SQLite" : "PostgreSQL"), \(servers) server(s)"
        )

        let encryptionKey = SecretBox.generateEncodedKey()
        let configuration = ServerConfiguration(
            dataDirectory: directory + "/data", databaseURL: databaseURL, encryptionKey: encryptionKey, adminToken: nil, logLevel: .warning)
        var logger = Logger(label: "herald.bench")
        logger.logLevel = .warning
        let (appID, apiKey) = try await withStore(configuration, logger: logger) { store in
            guard let tenant = try await store.tenants.create(name: "bench-\(UUID().uuidString.prefix(8))") else {
                throw BenchmarkError("could not create the benchmark's tenant")
            }
            let (app, apiKey) = try await store.applications.create(
                tenantID: tenant.id, name: "bench", description: "herald-dev bench schedules")
            return (app.id, apiKey)
        }

        var children: [ChildProcess] = []
        do {
            var bases: [String] = []
            for index in 0..<servers {
                let port = try await BenchmarkServer.freePort()
                var arguments = [
                    "serve", "--port", String(port), "--data-dir", directory + "/data", "--log-level", "warning",
                    "--send-immediately-within", "0",
                ]
                if let databaseURL { arguments += ["--database-url", databaseURL] }
                let server = try ChildProcess(
                    name: "herald serve", executable: workspace.herald, arguments: arguments,
                    environment: ["HERALD_ENCRYPTION_KEY": encryptionKey], logPath: directory + "/serve\(index).log")
                children.append(server)
                let base = "http://127.0.0.1:\(port)"
                try await BenchmarkServer.waitUntilServing(base, server: server)
                bases.append(base)
            }

            let authorization = "Basic " + Data("\(appID.lowercasedString):\(apiKey)".utf8).base64EncodedString()
            let first = EpochClock.system.now.epochMilliseconds + Int64(lead) * 1000
            let step = count > 1 ? Double(over) * 1000 / Double(count - 1) : 0
            let created = ContinuousClock.now
            let (servers, count, concurrency) = (bases, self.count, self.concurrency)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<concurrency {
                    group.addTask {
                        for index in stride(from: worker, to: count, by: concurrency) {
                            let at = first + Int64((Double(index) * step).rounded())
                            try await Self.schedule(servers[index % servers.count], authorization: authorization, at: at, index: index)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let creation = ContinuousClock.now - created
            print("created \(count) schedules in \(creation)")
            guard EpochClock.system.now.epochMilliseconds < first else {
                throw BenchmarkError("creating took longer than --lead: raise --lead")
            }
            let last = first + Int64(over) * 1000
            while EpochClock.system.now.epochMilliseconds < last + 3000 {
                for server in children where !server.isRunning {
                    throw BenchmarkError("a server exited; its output is in \(server.logPath)")
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            for child in children { await child.stop() }
        } catch {
            for child in children { await child.stop(grace: .seconds(2)) }
            throw error
        }

        let rows = try await withStore(configuration, logger: logger) { store in
            try await store.database.query("SELECT state, due_at, fired_at FROM push_schedule_slots").map { row in
                (try row.string("state"), try row.int("due_at"), try row.optionalInt("fired_at"))
            }
        }
        let pushes = try await withStore(configuration, logger: logger) { store in
            try await store.database.query("SELECT COUNT(*) AS n FROM pushes WHERE app_id = \(appID)").first?.int("n") ?? 0
        }
        let lateness = rows.compactMap { row in row.2.map { Double($0 - row.1) } }.sorted()
        let unfired = rows.filter { $0.0 != "fired" }.count
        guard !lateness.isEmpty else { throw BenchmarkError("nothing fired; logs in \(directory)") }
        print("")
        print("fired                   \(lateness.count) of \(count) (\(unfired) not fired); pushes made: \(pushes)")
        print(
            String(
                format: "lateness                p50 %.0f ms, p99 %.0f ms, max %.0f ms (fired_at − due)",
                BenchmarkServer.percentile(lateness, 0.50), BenchmarkServer.percentile(lateness, 0.99), lateness.last ?? 0))
        print(String(format: "early                   %d fired before their time", lateness.filter { $0 < 0 }.count))
    }

    // MARK: Steps

    private func withStore<Result>(
        _ configuration: ServerConfiguration, logger: Logger, _ body: (Store) async throws -> Result
    ) async throws -> Result {
        let store = try await Bootstrap.open(configuration, logger: logger).store
        do {
            let result = try await body(store)
            await store.database.shutdown()
            return result
        } catch {
            await store.database.shutdown()
            throw error
        }
    }

    private static func schedule(_ base: String, authorization: String, at: Int64, index: Int) async throws {
        var request = HTTPClientRequest(url: base + "/v1/push")
        request.method = .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Content-Type", value: "application/json")
        let device = UUID().lowercasedString
        request.body = .bytes(
            ByteBuffer(string: #"{"message":{"body":"bench \#(index)"},"target":{"devices":["\#(device)"]},"scheduleAt":\#(at)}"#))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        guard response.status == .ok, String(buffer: body).contains("schedule_id") else {
            throw BenchmarkError("schedule \(index) was refused: \(response.status) \(String(buffer: body))")
        }
    }

}
