import ArgumentParser
import Foundation
import Logging
import SQLiteNIO

#if canImport(Glibc)
    import Glibc
#endif

/// `herald restore --from FILE`: puts a backup made by `herald backup` back as the SQLite database
/// of `--data-dir`, with the server stopped. The database it replaces is kept beside it
/// (`herald.sqlite.before-restore-…`); pushes the backup holds that were not finished are sent
/// when the server starts again.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put a `herald backup` file back as the SQLite database (stop the server first).",
        discussion: """
            Refuses while a process has the database open. The data directory's encryption.key must be the one \
            the backup was made with (or set HERALD_ENCRYPTION_KEY to it).
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(help: "The backup file.")
    var from: String

    func run() async throws {
        let configuration = try database.configuration(environment: ProcessInfo.processInfo.environment)
        if configuration.databaseURL?.isEmpty == false {
            throw ValidationError("herald restore restores a SQLite database; for PostgreSQL use pg_restore or psql (docs/DEPLOYING.md)")
        }
        let directory = configuration.dataDirectory
        let target = directory + "/herald.sqlite"
        if let holder = Self.processHolding(database: target) {
            throw ValidationError("a process (pid \(holder)) has \(target) open: stop herald serve before restoring")
        }
        try await Self.check(backup: from)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Copied beside the database, flushed, then renamed over it: a restore that stops half way
        // leaves the old database as it was.
        let incoming = target + ".restoring"
        try? FileManager.default.removeItem(atPath: incoming)
        try FileManager.default.copyItem(atPath: from, toPath: incoming)
        try Self.flush(incoming)
        if FileManager.default.fileExists(atPath: target) {
            let stamp = Int(Date().timeIntervalSince1970)
            let kept = "\(target).before-restore-\(stamp)"
            guard rename(target, kept) == 0 else { throw ValidationError("cannot move \(target) aside: errno \(errno)") }
            print("the database it replaces is kept as \(kept)")
        }
        // The old database's write-ahead log belongs to the old file: applied to the restored one,
        // it would corrupt it.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        guard rename(incoming, target) == 0 else { throw ValidationError("cannot rename \(incoming) to \(target): errno \(errno)") }
        chmod(target, 0o600)
        print("restored \(from) to \(target); start herald serve to continue its pushes")
    }

    /// Fails unless `path` is a sound SQLite database with Herald's schema.
    private static func check(backup path: String) async throws {
        guard FileManager.default.isReadableFile(atPath: path) else { throw ValidationError("cannot read \(path)") }
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: Logger(label: "herald.restore"))
        do {
            _ = try await connection.query("PRAGMA query_only=ON")
            let check = try await connection.query("PRAGMA quick_check").first?.column("quick_check")?.string
            guard check == "ok" else { throw ValidationError("\(path) is damaged: \(check ?? "no answer")") }
            let migrations = try await connection.query("SELECT count(*) AS n FROM herald_migrations").first?.column("n")?.integer
            guard (migrations ?? 0) > 0 else { throw ValidationError("\(path) holds no Herald schema") }
            try await connection.close()
        } catch let error as ValidationError {
            try? await connection.close()
            throw error
        } catch {
            try? await connection.close()
            throw ValidationError("\(path) is not a Herald SQLite backup: \(error)")
        }
    }

    /// The pid of a process that has the database open in WAL mode, if any.
    ///
    /// Every SQLite connection to a WAL database holds a shared lock on byte 128 of its `-shm`
    /// file (the "DMS" lock of SQLite's unix VFS) for as long as it is open; `F_GETLK` reports a
    /// lock another process holds there. A server that was killed holds none.
    static func processHolding(database path: String) -> Int32? {
        let descriptor = open(path + "-shm", O_RDWR)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 128
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return lock.l_pid
    }

    /// Writes `path`'s data to disk before it is renamed into place.
    private static func flush(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0, fsync(descriptor) == 0 else {
            if descriptor >= 0 { close(descriptor) }
            throw ValidationError("cannot write \(path) to disk: errno \(errno)")
        }
        close(descriptor)
    }
}
