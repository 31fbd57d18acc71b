import HeraldCore
import HeraldDelivery
import HeraldStore
import Logging

import struct Foundation.URLComponents

/// Everything `herald serve` can be told; defaults give the zero-configuration server.
package struct ServerConfiguration: Sendable {
    package var host: String
    package var port: Int
    /// Where the SQLite database, the generated encryption key and the admin token live.
    package var dataDirectory: String
    /// `postgres://…` to use PostgreSQL; nil for the embedded SQLite database.
    package var databaseURL: String?
    /// PostgreSQL connections this process keeps open (all of them, all the time).
    package var databaseConnections = 20
    /// base64 or hex of 32 bytes; nil to use (or create) `encryption.key` in the data directory.
    package var encryptionKey: String?
    /// The root admin token to install instead of generating one.
    package var adminToken: String?
    package var logLevel: Logger.Level
    /// The delivery workers and provider endpoints.
    package var delivery = DeliveryConfiguration()
    /// The webhook workers and which addresses they may reach.
    package var webhooks = WebhookConfiguration()
    /// When geofence changes are pushed to devices (the debounce of the update push).
    package var geofenceUpdates = GeofenceUpdatePolicy()
    /// How long raw analytics events are kept.
    package var analytics = AnalyticsConfiguration()
    /// The metrics registry, log sensitivity, `/metrics` access and activity log size.
    package var observability = ObservabilityConfiguration()
    /// When pushes for later are sent at once, and how the scheduler wakes.
    package var scheduling = SchedulingConfiguration()
    /// Where the dashboard reads third-party browser libraries from (Debian's packages install
    /// them under /usr/share/javascript); nil: none, the pages show tables only.
    package var dashboardAssets: String? = "/usr/share/javascript"
    /// A tile server for the dashboard's map; nil: locations on a plain background.
    package var dashboardMapTiles: DashboardMapTiles?
    /// How large a device import (`POST /admin/v1/apps/:app/devices/import`) may be.
    package var deviceImport = DeviceImportConfiguration()

    package init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: String = "herald-data", databaseURL: String? = nil,
        encryptionKey: String? = nil, adminToken: String? = nil, logLevel: Logger.Level = .info
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.databaseURL = databaseURL
        self.encryptionKey = encryptionKey
        self.adminToken = adminToken
        self.logLevel = logLevel
    }
}

extension ServerConfiguration: RedactingDescription {
    /// The settings, with the database password, the encryption key and the admin token redacted.
    package var description: String {
        let database = databaseURL.map { Self.withoutPassword($0) } ?? "sqlite in \(dataDirectory)"
        return """
            ServerConfiguration(host: \(host), port: \(port), database: \(database), databaseConnections: \(databaseConnections), \
            encryptionKey: \(secretPlaceholder(encryptionKey)), adminToken: \(secretPlaceholder(adminToken)), logLevel: \(logLevel), \
            delivery: \(delivery), scheduling: \(scheduling))
            """
    }

    /// `url` with the password of its user part replaced (unparsable: only its scheme is kept).
    static func withoutPassword(_ url: String) -> String {
        guard var components = URLComponents(string: url) else {
            return (url.split(separator: ":", maxSplits: 1).first.map { "\($0):…" }) ?? "…"
        }
        if components.password != nil { components.password = "redacted" }
        return components.string ?? "…"
    }
}
