import ArgumentParser
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import Hummingbird
import Logging
import Metrics
import NIOCore

/// `herald serve`: runs the API and the delivery workers.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Herald server.",
        discussion: """
            With no options: SQLite in ./herald-data/, 127.0.0.1:8080. Environment: HERALD_DATABASE_URL,
            HERALD_ENCRYPTION_KEY (base64 or hex of 32 bytes), HERALD_ADMIN_TOKEN (install this root token),
            HERALD_APNS_ENDPOINT (send to this APNs instead of Apple's, e.g. `herald mock apns`),
            HERALD_EXTRA_CA_FILE (a PEM CA to trust besides the system's), HERALD_PROXY (http://[user:pass@]host:port or
            socks5://host:port, for FCM, Web Push and WNS), HERALD_FCM_ENDPOINT, HERALD_WEBPUSH_ENDPOINT, HERALD_WNS_ENDPOINT,
            HERALD_WNS_TOKEN_ENDPOINT and HERALD_WNS_TEST_HOST (send to mocks instead of Google's, the browsers' and Microsoft's),
            HERALD_SHUTDOWN_GRACE (--shutdown-grace).
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "Port to listen on (0 picks a free one).")
    var port: Int = 8080

    @Option(help: "Delivery workers in this process (0: this process only serves the API).")
    var workers: Int = ServerConfiguration().delivery.workers

    @Option(name: .customLong("batch-size"), help: "Devices per delivery batch: a crash can resend at most one batch per worker.")
    var batchSize: Int = ServerConfiguration().delivery.batchSize

    @Option(
        name: .customLong("job-lease"),
        help:
            "Seconds a claimed delivery job stays reserved without being renewed: after a crash, its jobs are taken again this long after it."
    )
    var jobLease: Int = 30

    @Option(
        name: .customLong("idle-poll"),
        help:
            "Seconds idle delivery workers and the scheduler sleep at most before looking at the database again, for work no process announced (another process's retries and expired leases). Default 5 on PostgreSQL, 600 on SQLite."
    )
    var idlePoll: Int?

    @Option(
        name: .customLong("shutdown-grace"),
        help:
            "Seconds: on SIGTERM or SIGINT, how long provider requests already sent may wait for their answers (none starts after the signal). (env: HERALD_SHUTDOWN_GRACE; default 10)"
    )
    var shutdownGrace: Int?

    @Option(help: "Days raw analytics events are kept (their hourly aggregates are kept for ever).")
    var analyticsRetentionDays: Int = 30

    @Option(help: "Milliseconds geofence edits must settle before devices are told (one silent push per burst).")
    var geofencePushDelay: Int64 = 3_000

    @Flag(help: "Log device tokens, credentials, keys and message bodies as they are (for debugging; off by default).")
    var logSensitive = false

    @Flag(help: "Serve /metrics without the root admin token (only where the port is not reachable from outside).")
    var metricsPublic = false

    @Flag(
        name: .customLong("webhook-allow-private"),
        help:
            "Let webhooks reach private, loopback and link-local addresses, and plain http:// URLs (tests, or receivers on this private network)."
    )
    var webhookAllowPrivate = false

    @Option(name: .customLong("webhook-workers"), help: "Webhook deliveries in flight at once in this process (0: none from this process).")
    var webhookWorkers: Int = ServerConfiguration().webhooks.workers
    @Option(
        name: .customLong("dashboard-assets"),
        help:
            "Where the dashboard's third-party browser libraries are (Debian's libjs-chart.js: chart.js/chart.min.js; libjs-leaflet: leaflet/leaflet.min.js and leaflet.css)."
    )
    var dashboardAssets: String = "/usr/share/javascript"

    @Option(
        name: .customLong("dashboard-map-tiles"),
        help:
            "A tile server URL for the dashboard's map, as Leaflet takes it (https://tiles.example.com/{z}/{x}/{y}.png); default none: a plain background, nothing fetched from elsewhere."
    )
    var dashboardMapTiles: String?

    @Option(name: .customLong("dashboard-map-attribution"), help: "The credit the tile server asks for, shown on the map.")
    var dashboardMapAttribution: String = ""

    @Option(
        name: .customLong("send-immediately-within"),
        help:
            "Seconds: a push scheduled closer than this (or in the past) is sent at once. (env: HERALD_SEND_IMMEDIATELY_WITHIN; default 60)"
    )
    var sendImmediatelyWithin: Int64?

    @Option(
        name: .customLong("missed-occurrence-grace"),
        help:
            "Seconds: a recurring schedule's occurrence missed by at most this much (every server down) still fires once; older ones are skipped and recorded. (default 3600)"
    )
    var missedOccurrenceGrace: Int64?

    @Option(name: .customLong("import-max-bytes"), help: "The largest device import body, in bytes (default 4 GiB).")
    var importMaxBytes: Int64 = 4 << 30

    @Option(
        name: .customLong("import-devices-per-transaction"),
        help: "Devices a device import writes per transaction (default 10000 on SQLite, 2000 on PostgreSQL).")
    var importDevicesPerTransaction: Int?

    func run() async throws {
        var configuration = try database.configuration(environment: ProcessInfo.processInfo.environment)
        let threshold =
            try sendImmediatelyWithin
            ?? ProcessInfo.processInfo.environment["HERALD_SEND_IMMEDIATELY_WITHIN"].flatMap { raw in
                guard !raw.isEmpty else { return nil }
                guard let seconds = Int64(raw) else { throw ValidationError("HERALD_SEND_IMMEDIATELY_WITHIN must be a number of seconds") }
                return seconds
            }
        if let threshold {
            guard (0...86_400).contains(threshold) else { throw ValidationError("--send-immediately-within must be 0 to 86400 seconds") }
            configuration.scheduling.sendImmediatelyWithin = .seconds(threshold)
        }
        if let missedOccurrenceGrace {
            guard (0...604_800).contains(missedOccurrenceGrace) else {
                throw ValidationError("--missed-occurrence-grace must be 0 to 604800 seconds")
            }
            configuration.scheduling.missedOccurrenceGrace = .seconds(missedOccurrenceGrace)
        }
        configuration.host = host
        configuration.port = port
        guard importMaxBytes >= 1 else { throw ValidationError("--import-max-bytes must be 1 or more") }
        configuration.deviceImport.maximumBytes = importMaxBytes
        if let importDevicesPerTransaction {
            guard (1...100_000).contains(importDevicesPerTransaction) else {
                throw ValidationError("--import-devices-per-transaction must be between 1 and 100000")
            }
            configuration.deviceImport.devicesPerTransaction = importDevicesPerTransaction
        }
        guard workers >= 0 else { throw ValidationError("--workers must be 0 or more") }
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be between 1 and 10000") }
        guard (1...3600).contains(jobLease) else { throw ValidationError("--job-lease must be between 1 and 3600 seconds") }
        configuration.delivery.workers = workers
        configuration.delivery.batchSize = batchSize
        configuration.delivery.lease = .seconds(jobLease)
        if let idlePoll {
            guard (1...3600).contains(idlePoll) else { throw ValidationError("--idle-poll must be between 1 and 3600 seconds") }
            configuration.delivery.idlePoll = .seconds(idlePoll)
            configuration.webhooks.idlePoll = .seconds(idlePoll)
            configuration.scheduling.maximumSleep = .seconds(idlePoll)
        }
        let grace =
            try shutdownGrace
            ?? ProcessInfo.processInfo.environment["HERALD_SHUTDOWN_GRACE"].flatMap { raw in
                guard !raw.isEmpty else { return nil }
                guard let seconds = Int(raw) else { throw ValidationError("HERALD_SHUTDOWN_GRACE must be a whole number of seconds") }
                return seconds
            }
        if let grace {
            guard (0...300).contains(grace) else { throw ValidationError("--shutdown-grace must be 0 to 300 seconds") }
            configuration.delivery.shutdownGrace = .seconds(grace)
        }
        guard (0...100).contains(webhookWorkers) else { throw ValidationError("--webhook-workers must be between 0 and 100") }
        configuration.webhooks.workers = webhookWorkers
        configuration.webhooks.addressPolicy = WebhookAddressPolicy(allowsPrivate: webhookAllowPrivate)
        guard analyticsRetentionDays >= 1 else { throw ValidationError("--analytics-retention-days must be 1 or more") }
        configuration.analytics.retentionDays = analyticsRetentionDays
        guard geofencePushDelay >= 0 else { throw ValidationError("--geofence-push-delay must be 0 or more") }
        configuration.geofenceUpdates = GeofenceUpdatePolicy(delay: geofencePushDelay, maximumDelay: max(30_000, 10 * geofencePushDelay))
        configuration.observability.logSensitivity = logSensitive ? .verbose : .redacted
        configuration.observability.metricsPublic = metricsPublic
        configuration.dashboardAssets = dashboardAssets
        if let dashboardMapTiles {
            guard let tiles = DashboardMapTiles(url: dashboardMapTiles, attribution: dashboardMapAttribution) else {
                throw ValidationError("--dashboard-map-tiles must be an http(s) URL with {z}, {x} and {y}, without spaces or quotes")
            }
            configuration.dashboardMapTiles = tiles
        }
        // Once per process, here only: what libraries count through the global metrics system
        // lands in the registry /metrics reads. Herald's own metrics use the factory explicitly.
        // One server per SQLite file: a second one (a restart beside a process still draining)
        // is refused before it opens the database.
        let lock = configuration.databaseURL == nil ? try DataDirectoryLock(directory: configuration.dataDirectory) : nil
        MetricsSystem.bootstrap(Observability.metricsFactory(registry: configuration.observability.registry))
        let (host, port) = (configuration.host, configuration.port)
        let app = try await buildApplication(configuration) { channel in
            // One line on standard output, unbuffered, with the port actually bound (--port 0).
            let bound = channel.localAddress?.port ?? port
            writeOperatorLine("Herald is serving http://\(host):\(bound)")
        }
        try await app.runService()
        lock?.release()
    }
}

/// `herald migrate`: applies pending schema migrations and exits.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending database migrations (serve also does this at start).")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let configuration = try database.configuration(environment: ProcessInfo.processInfo.environment)
        let logger = Logger(label: "herald")
        let opened = try await Bootstrap.open(configuration, logger: logger)
        let versions = try await opened.store.migrator.appliedVersions()
        await opened.store.database.shutdown()
        print("schema is at version \(versions.max() ?? 0)")
        if let token = opened.generatedAdminToken {
            writeOperatorLine("generated a root admin token (saved to \(opened.adminTokenPath)): \(token)")
        }
    }
}
