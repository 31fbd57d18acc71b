import ArgumentParser
import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import Logging

/// `herald analytics prune`: deletes raw analytics events past retention, as the server does every hour.
struct AnalyticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "Analytics maintenance.",
        subcommands: [Prune.self])

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete raw analytics events older than the retention (the hourly aggregates stay).")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "Days of raw events to keep.")
        var retentionDays: Int = 30

        func run() async throws {
            guard retentionDays >= 0 else { throw ValidationError("--retention-days must be 0 or more") }
            let configuration = try database.configuration(environment: ProcessInfo.processInfo.environment)
            let logger = Logger(label: "herald")
            let opened = try await Bootstrap.open(configuration, logger: logger)
            let cutoff = AnalyticsConfiguration(retentionDays: retentionDays).cutoff(now: EpochClock.system.now.epochMilliseconds)
            let deleted: Int
            do {
                deleted = try await opened.store.analytics.deleteEvents(receivedBefore: cutoff)
            } catch {
                await opened.store.database.shutdown()
                throw error
            }
            await opened.store.database.shutdown()
            print("deleted \(deleted) raw analytics events received more than \(retentionDays) days ago")
        }
    }
}
