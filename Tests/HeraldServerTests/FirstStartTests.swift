import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the real `herald serve` leaves for the operator on its first start in an empty data
/// directory, with standard output going to a file (as under systemd or `> log`).
@Suite struct FirstStartTests {
    /// A fresh data directory, removed afterwards.
    private static func withDataDirectory(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-first-start-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await body(directory)
    }

    /// The generated root token is in the output file while the server still runs: it was
    /// written unbuffered, not left in stdio's buffer until exit.
    @Test func theGeneratedAdminTokenReachesARedirectedStdoutAtOnce() async throws {
        try await Self.withDataDirectory { directory in
            let server = try await HeraldProcess(
                ["--data-dir", directory + "/data"], environment: [:], logDirectory: directory, name: "serve")
            defer { server.kill(SIGKILL) }
            let saved = try String(contentsOfFile: directory + "/data/admin-token", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!saved.isEmpty)
            #expect(server.isRunning)
            #expect(server.output.contains(saved), "stdout so far:\n\(server.output)")
        }
    }

    /// The SQLite database and its WAL and shared-memory files hold device tokens and message
    /// bodies: only their owner may read them.
    @Test func theSQLiteFilesAreReadableByTheirOwnerOnly() async throws {
        try await Self.withDataDirectory { directory in
            let server = try await HeraldProcess(
                ["--data-dir", directory + "/data"], environment: [:], logDirectory: directory, name: "serve")
            defer { server.kill(SIGKILL) }
            // The server has migrated and serves, so the database has been written through the WAL.
            for name in ["herald.sqlite", "herald.sqlite-wal", "herald.sqlite-shm", "admin-token", "encryption.key"] {
                var info = stat()
                #expect(stat(directory + "/data/" + name, &info) == 0, "\(name) exists")
                #expect(info.st_mode & 0o777 == 0o600, "\(name) has mode \(String(info.st_mode & 0o777, radix: 8))")
            }
        }
    }
}
