import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore

/// `herald import`: bring an application over from another push service.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Bring an application over from another push service.",
        subcommands: [PivotalImportCommand.self])
}

/// `herald import pivotal`: an application read from a running Pivotal Push API, recreated in
/// a Herald with the same identities.
struct PivotalImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pivotal",
        abstract: "Recreate an application of a running Pivotal Push server in Herald, keeping its identities.",
        discussion: """
            Reads the application from --from with its uuid and api key (/v2/registrations per platform, /v2/topics, \
            /v2/custom_user_ids, /v1/schedules, /v1/locations, /v1/location_groups, /v1/geofence), then creates in the \
            Herald at --url what it lacks: the application with its uuid and api key, each --platform with its uuid and \
            secret (Pivotal never shows secrets), topics with their expiry, locations, groups, geofences, the devices \
            with their uuids (through the device import), and the pending schedules with their schedule ids. Everything is \
            read before anything is written; a second run writes nothing, and a run after an interruption brings what is \
            missing. A page the source fails transiently is asked again (--source-retries). The provider \
            credentials (APNs key, Firebase service account, …) are uploaded afterwards: the summary says which.
            """)

    @OptionGroup var client: AdminClientOptions
    @Option(help: "The Pivotal Push server's base URL (what the apps have as pivotal.push.serviceUrl).") var from: String
    @Option(help: "The application's uuid and api key on the source: UUID:API_KEY.") var app: String
    @Option(
        name: .customLong("platform"),
        help: "A platform's uuid and secret: UUID:SECRET, or UUID:SECRET:TYPE when it has no devices (repeat for each platform).")
    var platforms: [String] = []
    @Option(help: "The tenant to create the application in (default: the admin token's, or 'default').") var tenant: String?
    @Option(help: "The application's name in Herald (the Pivotal API does not show it).") var name = "Imported from Pivotal"
    @Option(name: .customLong("source-timeout"), help: "Seconds a request to the source may take before the import gives up.")
    var sourceTimeout = 30
    @Option(
        name: .customLong("source-retries"),
        help: "Times a request the source fails transiently (5xx, broken connection) is tried again, waiting twice as long each time.")
    var sourceRetries = 5
    /// The first wait before a retry, in milliseconds (tests make it tiny).
    @Option(name: .customLong("source-retry-wait-ms"), help: .hidden) var sourceRetryWait = 500

    func validate() throws {
        guard Self.split(app, parts: 2).count == 2, UUID(text: Self.split(app, parts: 2)[0]) != nil else {
            throw ValidationError("--app: give the application's UUID:API_KEY")
        }
        for platform in platforms {
            let parts = Self.split(platform, parts: 3)
            guard parts.count >= 2, UUID(text: parts[0]) != nil, !parts[1].isEmpty else {
                throw ValidationError("--platform: give the platform's UUID:SECRET (or UUID:SECRET:TYPE), not '\(platform)'")
            }
            if parts.count == 3 { _ = try Self.type(parts[2]) }
        }
        guard (1...3600).contains(sourceTimeout) else { throw ValidationError("--source-timeout: 1 to 3600 seconds") }
        guard (0...10).contains(sourceRetries) else { throw ValidationError("--source-retries: 0 to 10") }
        guard (0...60_000).contains(sourceRetryWait) else { throw ValidationError("--source-retry-wait-ms: 0 to 60000") }
        guard URL(string: from)?.host != nil else { throw ValidationError("--from: give the source's URL (https://push.example.com)") }
    }

    func run() async throws {
        let appParts = Self.split(app, parts: 2)
        let appUUID = appParts[0].lowercased()
        let given = try platforms.map { raw in
            let parts = Self.split(raw, parts: 3)
            return PivotalImport.GivenPlatform(
                uuid: parts[0].lowercased(), secret: parts[1], type: try parts.count == 3 ? Self.type(parts[2]) : nil)
        }
        let timeout = TimeAmount.seconds(Int64(sourceTimeout))
        let http = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: HTTPClient.Configuration(timeout: .init(connect: .seconds(10), read: timeout)))
        let spool = NSTemporaryDirectory() + "herald-import-\(appUUID)-\(ProcessInfo.processInfo.processIdentifier).ndjson"
        var source = PivotalSource(http: http, base: Self.trimmed(from), appCredentials: "\(appUUID):\(appParts[1])", timeout: timeout)
        source.retryDelays = PivotalSource.retryDelays(first: .milliseconds(sourceRetryWait), count: sourceRetries)
        let work = PivotalImport(
            source: source,
            target: HeraldTarget(
                http: http, base: Self.trimmed(client.url), adminToken: try client.resolvedToken(),
                appCredentials: "\(appUUID):\(appParts[1])", timeout: .minutes(10)),
            appUUID: appUUID, apiKey: appParts[1], platforms: given, tenant: tenant, name: name, spool: spool, quiet: false,
            clock: .system)
        var summary = ImportSummary()
        var failure: String?
        do {
            try await work.run(&summary)
        } catch let error as SourceError {
            failure = error.description
        } catch let error as TargetError {
            failure = error.description
        } catch let error as ImportError {
            failure = error.description
        } catch {
            failure = "cannot reach the target at \(client.url): \(error)"
        }
        try? FileManager.default.removeItem(atPath: spool)
        try await http.shutdown()
        print(summary.text(failure: failure))
        if failure != nil { throw ExitCode(1) }
    }

    /// `text` cut at its first `parts - 1` colons.
    static func split(_ text: String, parts: Int) -> [String] {
        text.split(separator: ":", maxSplits: parts - 1, omittingEmptySubsequences: false).map(String.init)
    }

    static func trimmed(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    static func type(_ raw: String) throws -> PlatformType {
        do {
            return try PlatformType.parse(raw, field: "type")
        } catch {
            throw ValidationError("--platform: '\(raw)' is not a platform type (ios, android, web or windows)")
        }
    }
}
