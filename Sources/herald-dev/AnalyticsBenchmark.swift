import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import Logging
import NIOCore
import NIOPosix

/// `herald-dev bench analytics`: SDK-shaped event batches posted to `POST /v1/analytics` of a real
/// `herald serve` process for a while; prints the events/s stored and aggregated, and checks
/// the hourly aggregates against what was posted.
struct AnalyticsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "Post analytics batches to `herald serve` for a while and measure events/s ingested and aggregated.",
        discussion: """
            Creates an app and an Android platform in a fresh store (SQLite in a temporary directory, or the
            PostgreSQL database given with --database-url), starts `herald serve` as its own process, then posts
            batches shaped like the PCF SDKs' (received and opened events for a few receipts, every field a
            string) from --devices concurrent clients for --seconds. An answered batch is stored and counted into
            the hourly aggregates in one transaction, so the rate printed is events ingested and aggregated.
            Build with `swift build -c release` first and run the release binary.
            """)

    @Option(help: "Seconds to post for.") var seconds: Int = 10
    @Option(help: "Concurrent clients (devices) posting.") var devices: Int = 16
    @Option(name: .customLong("batch-size"), help: "Events per request.") var batchSize: Int = 50
    @Option(help: "Distinct receipts the events report on.") var receipts: Int = 20
    @Option(name: .customLong("database-url"), help: "postgres://… to benchmark PostgreSQL (a scratch database).")
    var databaseURL: String?
    @Option(name: .customLong("serve-args"), help: "Extra arguments for `herald serve`, space-separated.") var serveArguments: String = ""
    @Flag(help: "Keep the temporary directory (logs, database).") var keep = false

    func validate() throws {
        guard seconds > 0, devices > 0, receipts > 0 else {
            throw ValidationError("--seconds, --devices and --receipts must be at least 1")
        }
        guard (1...Limits.analyticsEventsPerBatch).contains(batchSize) else {
            throw ValidationError("--batch-size must be between 1 and \(Limits.analyticsEventsPerBatch)")
        }
    }

    func run() async throws {
        let workspace = try BenchmarkWorkspace()
        defer { workspace.finish(keep: keep) }
        let directory = workspace.directory
        print(
            "herald-dev bench analytics: \(databaseURL == nil ? "SQLite" : "PostgreSQL"), \(devices) clients, \(batchSize) events per batch, \(seconds) s"
        )
        let encryptionKey = SecretBox.generateEncodedKey()
        let configuration = ServerConfiguration(
            dataDirectory: directory + "/data", databaseURL: databaseURL, encryptionKey: encryptionKey, adminToken: nil, logLevel: .warning)
        let seeded = try await seed(configuration)

        let port = try await BenchmarkServer.freePort()
        var arguments = ["serve", "--port", String(port), "--data-dir", directory + "/data", "--workers", "0", "--log-level", "warning"]
        if let databaseURL { arguments += ["--database-url", databaseURL] }
        arguments += serveArguments.split(separator: " ").map(String.init)
        let server = try ChildProcess(
            name: "herald serve", executable: workspace.herald, arguments: arguments, environment: ["HERALD_ENCRYPTION_KEY": encryptionKey],
            logPath: directory + "/serve.log")
        let base = "http://127.0.0.1:\(port)"
        do {
            try await BenchmarkServer.waitUntilServing(base, server: server)
            let receiptIDs = (0..<receipts).map { _ in UUID().lowercasedString }
            let platformAuth = "Basic " + Data("\(seeded.platformID):\(seeded.platformSecret)".utf8).base64EncodedString()

            let started = ContinuousClock.now
            let end = started + .seconds(seconds)
            let totals = try await withThrowingTaskGroup(of: (events: Int, requests: Int, failed: Int, latencies: [Double]).self) { group in
                for client in 0..<devices {
                    group.addTask {
                        try await post(base, auth: platformAuth, client: client, receipts: receiptIDs, until: end)
                    }
                }
                var total = (events: 0, requests: 0, failed: 0, latencies: [Double]())
                for try await part in group {
                    total.events += part.events
                    total.requests += part.requests
                    total.failed += part.failed
                    total.latencies += part.latencies
                }
                return total
            }
            let elapsed = ContinuousClock.now - started
            let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let aggregated = try await aggregatedEvents(base, seeded)
            await server.stop()

            let latencies = totals.latencies.sorted()
            func percentile(_ fraction: Double) -> Double {
                latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
            }
            print("requests: \(totals.requests) answered 200, \(totals.failed) failed")
            print("events stored and aggregated: \(totals.events) in \(String(format: "%.2f", elapsedSeconds)) s")
            print(
                String(
                    format: "rate: %.0f events/s (%.1f requests/s)", Double(totals.events) / elapsedSeconds,
                    Double(totals.requests) / elapsedSeconds))
            print(
                String(format: "request latency ms: p50 %.1f, p99 %.1f, max %.1f", percentile(0.5), percentile(0.99), latencies.last ?? 0))
            print(
                "hourly aggregates count \(aggregated) events\(aggregated == totals.events ? " (matches)" : " (MISMATCH: expected \(totals.events))")"
            )
            if aggregated != totals.events || totals.failed > 0 {
                throw BenchmarkError("the aggregates do not match what was accepted, or requests failed; logs in \(directory)")
            }
        } catch {
            await server.stop()
            throw error
        }
    }

    /// One client's loop: a batch, its answer, the next batch, until `end`.
    private func post(
        _ base: String, auth: String, client: Int, receipts: [String], until end: ContinuousClock.Instant
    ) async throws -> (events: Int, requests: Int, failed: Int, latencies: [Double]) {
        let deviceUUID = UUID().lowercasedString
        var result = (events: 0, requests: 0, failed: 0, latencies: [Double]())
        var sequence = client
        while ContinuousClock.now < end {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            var events: [String] = []
            events.reserveCapacity(batchSize)
            for index in 0..<batchSize {
                sequence += 1
                let type = index % 4 == 0 ? AnalyticsEventType.opened : AnalyticsEventType.received
                events.append(
                    #"{"eventType":"\#(type)","eventTime":"\#(now - Int64(index))","receiptId":"\#(receipts[sequence % receipts.count])","deviceUuid":"\#(deviceUUID)","sdkVersion":"1.10.0","platformType":"android"}"#
                )
            }
            var request = HTTPClientRequest(url: base + "/v1/analytics")
            request.method = .POST
            request.headers.add(name: "Authorization", value: auth)
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: #"{"events":["# + events.joined(separator: ",") + "]}"))
            let sent = ContinuousClock.now
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 16)
            let took = ContinuousClock.now - sent
            result.latencies.append(Double(took.components.seconds) * 1000 + Double(took.components.attoseconds) / 1e15)
            if response.status == .ok {
                result.events += batchSize
                result.requests += 1
            } else {
                result.failed += 1
            }
        }
        return result
    }

    private struct Seeded {
        let appID: String
        let apiKey: String
        let platformID: String
        let platformSecret: String
    }

    private func seed(_ configuration: ServerConfiguration) async throws -> Seeded {
        var logger = Logger(label: "herald.bench")
        logger.logLevel = .warning
        let store = try await Bootstrap.open(configuration, logger: logger).store
        do {
            guard let tenant = try await store.tenants.create(name: "bench-\(UUID().uuidString.prefix(8))") else {
                throw BenchmarkError("could not create the benchmark's tenant")
            }
            let (app, apiKey) = try await store.applications.create(
                tenantID: tenant.id, name: "bench", description: "herald-dev bench analytics")
            let (platform, secret) = try await store.platforms.create(
                applicationID: app.id, name: "android", type: .android, credentials: nil)
            await store.database.shutdown()
            return Seeded(
                appID: app.id.lowercasedString, apiKey: apiKey, platformID: platform.id.lowercasedString, platformSecret: secret)
        } catch {
            await store.database.shutdown()
            throw error
        }
    }

    /// Every event the app's hourly aggregates count, over the last day.
    private func aggregatedEvents(_ base: String, _ seeded: Seeded) async throws -> Int {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var request = HTTPClientRequest(url: base + "/v1/analytics/summary?from=\(now - 86_400_000)&to=\(now + 3_600_000)")
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(seeded.appID):\(seeded.apiKey)".utf8).base64EncodedString())
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok,
            let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
            let buckets = json["buckets"] as? [[String: Any]]
        else {
            throw BenchmarkError("the summary answered \(response.status): \(String(buffer: body))")
        }
        return buckets.reduce(0) { total, bucket in
            total + ((bucket["events"] as? [String: Int])?.values.reduce(0, +) ?? 0)
        }
    }

}
