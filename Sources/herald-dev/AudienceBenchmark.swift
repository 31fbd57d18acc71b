import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import Logging

/// `herald-dev bench audience`: how fast the fan-out reads an audience expression's pages against a
/// topic push's pages of the same size, in the same store, interleaved.
struct AudienceBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audience",
        abstract: "Page through N devices as a topic push and as audience expressions of the same size, interleaved.",
        discussion: """
            Seeds N devices straight into a fresh store (SQLite in a temporary directory, or the PostgreSQL database given
            with --database-url) with SQL: two thirds typed iOS and one third Android, every one subscribed to `news`, a topic
            `sports` with no subscriber, a custom user id on one in five and a time zone on three in four. Then, --rounds
            times, reads the whole audience page by page (`PushRepository.audiencePage`, as the fan-out does) for:
            topic — target.topics ["news"]; example — the issue's expression
            {"and":[{"topic":"news"},{"not":{"topic":"sports"}},{"or":[{"platform":"ios"},{"platform":"android"}]}]}
            and scan — {"and":[{"or":[{"os":"ios"},{"os":"android"}]},{"not":{"topic":"sports"}}]}; both expressions are read
            in windows of the app's devices (`windowPage`). All three reach all N.
            Prints each run's time and devices/s, and the time of validate_only's count for each.
            What differs between a topic push and an expression is this read; the batches it makes are sent alike.
            """)

    @Option(help: "Devices to seed.") var devices: Int = 1_000_000
    @Option(help: "Devices per page (the fan-out's batch size).") var page: Int = 1000
    @Option(help: "Rounds of the three reads, interleaved.") var rounds: Int = 3
    @Option(name: .customLong("database-url"), help: "postgres://… to benchmark PostgreSQL (a scratch database).")
    var databaseURL: String?
    @Flag(help: "Keep the temporary directory.") var keep = false

    static let example = #"{"and":[{"topic":"news"},{"not":{"topic":"sports"}},{"or":[{"platform":"ios"},{"platform":"android"}]}]}"#
    static let scan = #"{"and":[{"or":[{"os":"ios"},{"os":"android"}]},{"not":{"topic":"sports"}}]}"#

    func validate() throws {
        guard devices > 0, page > 0, rounds > 0 else { throw ValidationError("--devices, --page and --rounds must be at least 1") }
    }

    func run() async throws {
        let workspace = try BenchmarkWorkspace()
        defer { workspace.finish(keep: keep) }
        print("herald-dev bench audience: \(devices) devices, \(databaseURL == nil ? "SQLite" : "PostgreSQL"), pages of \(page)")
        var logger = Logger(label: "herald.bench")
        logger.logLevel = .warning
        let configuration = ServerConfiguration(
            dataDirectory: workspace.directory + "/data", databaseURL: databaseURL, encryptionKey: SecretBox.generateEncodedKey(),
            adminToken: nil, logLevel: .warning)
        let store = try await Bootstrap.open(configuration, logger: logger).store
        do {
            let appID = try await seed(store)
            let pushes: [(String, Push)] = [
                ("topic", try Self.push(PushInput.Target(topics: ["news"]))),
                ("example", try Self.push(PushInput.Target(audience: try Self.json(Self.example)))),
                ("scan", try Self.push(PushInput.Target(audience: try Self.json(Self.scan)))),
            ]
            for round in 1...rounds {
                for (name, push) in pushes {
                    let started = ContinuousClock.now
                    var cursor: Int64 = 0
                    var reached = 0
                    var pages = 0
                    while true {
                        let next = try await store.pushes.audiencePage(of: push, applicationID: appID, after: cursor, limit: page)
                        reached += next.deviceIDs.count
                        cursor = next.cursor
                        pages += 1
                        if next.exhausted { break }
                    }
                    let seconds = Self.seconds(ContinuousClock.now - started)
                    let counting = ContinuousClock.now
                    let counted = try await store.pushes.audienceCount(of: push, applicationID: appID)
                    let countSeconds = Self.seconds(ContinuousClock.now - counting)
                    print(
                        String(
                            format: "round %d %-8@ %8d devices in %5d pages: %7.2f s, %9.0f devices/s, %6.3f ms/page; count %d in %.2f s",
                            round, name as NSString, reached, pages, seconds, Double(reached) / seconds, seconds * 1000 / Double(pages),
                            counted, countSeconds))
                }
            }
        } catch {
            await store.database.shutdown()
            throw error
        }
        await store.database.shutdown()
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    static func push(_ target: PushInput.Target) throws -> Push {
        try PushInput(message: .init(body: "bench"), target: target).validated(now: 0)
    }

    /// The app, its platform, its topics and devices, written with a few statements.
    private func seed(_ store: Store) async throws -> UUID {
        guard let tenant = try await store.tenants.create(name: "bench-\(UUID().uuidString.prefix(8))") else {
            throw BenchmarkError("could not create the benchmark's tenant")
        }
        let (app, _) = try await store.applications.create(tenantID: tenant.id, name: "bench", description: "herald-dev bench audience")
        let (ios, _) = try await store.platforms.create(
            applicationID: app.id, name: "ios", type: .ios,
            credentials: try ProviderMock.apnsCredentials(key: P256.Signing.PrivateKey(), keyID: "ABC123DEFG", topic: "com.example.bench"))
        // The Android third is typed `android` on the iOS platform's row: the pages compare
        // `platform_type`, and nothing is sent (no FCM credentials to make).
        let database = store.database
        let numbers: SQL =
            database.dialect == .postgres
            ? "generate_series(1, \(devices)) AS n(i)"
            : "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(devices)) SELECT i FROM n) AS n"
        let started = ContinuousClock.now
        try await database.query(
            """
            INSERT INTO devices (uuid, app_id, platform_id, platform_type, token, os, custom_user_id, time_zone, active, created_at, updated_at)
            SELECT 'bench-' || i, \(app.id), \(ios.id),
                CASE WHEN i % 3 = 0 THEN 'android' ELSE 'ios' END, 'token-' || i, CASE WHEN i % 3 = 0 THEN 'android' ELSE 'ios' END,
                CASE WHEN i % 5 = 0 THEN 'user-' || (i % 50000) END,
                CASE i % 4 WHEN 0 THEN 'Europe/Paris' WHEN 1 THEN 'Asia/Tokyo' WHEN 2 THEN 'America/New_York' END, 1, 0, 0
            FROM \(numbers)
            """)
        try await database.query(
            "INSERT INTO device_tags (device_id, app_id, tag) SELECT id, app_id, 'news' FROM devices WHERE app_id = \(app.id)")
        for name in ["news", "sports"] {
            try await database.query("INSERT INTO topics (app_id, name, created_at) VALUES (\(app.id), \(name), 0)")
        }
        try await database.query("ANALYZE")
        print("seeded \(devices) devices in \(ContinuousClock.now - started)")
        return app.id
    }
}
