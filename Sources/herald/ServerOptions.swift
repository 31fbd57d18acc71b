import ArgumentParser
import Foundation
import HeraldCore
import HeraldHTTP
import HeraldServer
import Logging

/// Options shared by the commands that open the database.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Directory for the SQLite database, encryption key and admin token.")
    var dataDirectory: String = "herald-data"

    @Option(
        name: .customLong("database-url"),
        help: "postgres://user:password@host:port/database to use PostgreSQL instead of SQLite. (env: HERALD_DATABASE_URL)")
    var databaseURL: String?

    @Option(
        name: .customLong("database-connections"),
        help:
            "The most PostgreSQL connections this process opens (default 20; one stays open, the others close after 10 s idle). (env: HERALD_DATABASE_CONNECTIONS)"
    )
    var databaseConnections: Int?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    /// Read by `Herald.main` before parsing (ConfigFile); declared here for --help and parsing.
    @Option(
        name: .customLong("config"),
        help:
            "A JSON file of settings under their flag names (\"port\": 8080) or environment names without HERALD_ (\"encryption-key\"); flags and the environment win over it (docs/DEPLOYING.md)."
    )
    var configFile: String?

    func configuration(environment: [String: String]) throws -> ServerConfiguration {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        var configuration = ServerConfiguration(
            dataDirectory: dataDirectory,
            databaseURL: databaseURL ?? environment["HERALD_DATABASE_URL"],
            encryptionKey: environment["HERALD_ENCRYPTION_KEY"],
            adminToken: environment["HERALD_ADMIN_TOKEN"],
            logLevel: level)
        var connections = databaseConnections
        if connections == nil, let text = environment["HERALD_DATABASE_CONNECTIONS"], !text.isEmpty {
            guard let value = Int(text) else { throw ValidationError("HERALD_DATABASE_CONNECTIONS must be a whole number") }
            connections = value
        }
        if let connections {
            guard (2...1000).contains(connections) else {
                throw ValidationError("--database-connections (HERALD_DATABASE_CONNECTIONS) must be from 2 to 1000")
            }
            configuration.databaseConnections = connections
        }
        if let endpoint = environment["HERALD_APNS_ENDPOINT"], !endpoint.isEmpty {
            configuration.delivery.apnsEndpoint = endpoint
        }
        let delivery = { (name: String) -> String? in
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        configuration.delivery.fcmEndpoint = delivery("HERALD_FCM_ENDPOINT")
        configuration.delivery.webPushEndpoint = delivery("HERALD_WEBPUSH_ENDPOINT")
        configuration.delivery.wnsEndpoint = delivery("HERALD_WNS_ENDPOINT")
        configuration.delivery.wnsTokenEndpoint = delivery("HERALD_WNS_TOKEN_ENDPOINT")
        configuration.delivery.wnsAllowedTestHost = delivery("HERALD_WNS_TEST_HOST")
        if let proxy = delivery("HERALD_PROXY") {
            do {
                configuration.delivery.proxy = try OutboundProxy(url: proxy)
            } catch {
                throw ValidationError("HERALD_PROXY: \(error.message)")
            }
        }
        if let path = environment["HERALD_EXTRA_CA_FILE"], !path.isEmpty {
            // Checked here, so that a file TLS cannot load stops the start with its name rather
            // than failing every provider connection later.
            do {
                configuration.delivery.extraTrustedCAPEM = try ExtraCAFile.load(path: path)
            } catch {
                throw ValidationError("\(error)")
            }
            configuration.webhooks.extraTrustedCAPEM = configuration.delivery.extraTrustedCAPEM
        }
        return configuration
    }
}
