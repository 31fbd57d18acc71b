import ArgumentParser
import Foundation
import Logging
import SQLiteNIO

/// `herald backup --to FILE`: a consistent copy of the SQLite database, taken while Herald serves.
///
/// `VACUUM INTO` reads the database in one read transaction, so the copy is the database as of
/// one commit: in WAL mode the server's commits go on meanwhile and are not in the copy. Every
/// push and registration the server had answered before the backup started is in it. On
/// PostgreSQL, use the server's own tools (pg_dump, or base backups with WAL archiving for
/// point-in-time recovery; docs/DEPLOYING.md).
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the SQLite database consistently while Herald serves (PostgreSQL: pg_dump, see docs/DEPLOYING.md).",
        discussion: """
            The copy holds the database only: keep <data-dir>/encryption.key (or HERALD_ENCRYPTION_KEY) with it, \
            without which the platforms' credentials in it cannot be read.
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(help: "The file to write (it must not exist yet).")
    var to: String

    func run() async throws {
        let configuration = try database.configuration(environment: ProcessInfo.processInfo.environment)
        if configuration.databaseURL?.isEmpty == false {
            throw ValidationError("herald backup copies a SQLite database; for PostgreSQL use pg_dump (docs/DEPLOYING.md)")
        }
        let source = configuration.dataDirectory + "/herald.sqlite"
        guard FileManager.default.fileExists(atPath: source) else { throw ValidationError("no database at \(source)") }
        guard !FileManager.default.fileExists(atPath: to) else { throw ValidationError("\(to) exists already") }
        // Written beside the target and renamed: a backup that stopped half way is never mistaken for one.
        let partial = to + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        let logger = Logger(label: "herald.backup")
        let connection = try await SQLiteConnection.open(storage: .file(path: source), logger: logger)
        do {
            // VACUUM INTO reads in one transaction and writes only the new file (query_only would
            // refuse it); opening the WAL can wait for the server's checkpoint, hence the timeout.
            _ = try await connection.query("PRAGMA busy_timeout=30000")
            let start = ContinuousClock.now
            _ = try await connection.query("VACUUM INTO ?", [.text(partial)])
            try await connection.close()
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            guard rename(partial, to) == 0 else { throw ValidationError("cannot rename \(partial) to \(to): errno \(errno)") }
            let size = (try? FileManager.default.attributesOfItem(atPath: to)[.size] as? NSNumber)?.int64Value ?? 0
            print("backed up \(source) to \(to) (\(size) bytes, \(String(format: "%.2f", seconds)) s)")
            print("keep \(configuration.dataDirectory)/encryption.key (or HERALD_ENCRYPTION_KEY) with it")
        } catch {
            try? await connection.close()
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }
}
