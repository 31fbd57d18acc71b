import Foundation
import HeraldCore
import HeraldStore
import Logging

/// The database engines every store test runs against.
package enum Backend: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    package var description: String { rawValue }

    /// SQLite always; PostgreSQL when `HERALD_TEST_POSTGRES_URL` is set — or required by
    /// `HERALD_REQUIRE_POSTGRES=1` (as `scripts/test` does), so that a missing server fails
    /// the run instead of silently skipping half of it.
    package static var available: [Backend] {
        let environment = ProcessInfo.processInfo.environment
        if environment["HERALD_TEST_POSTGRES_URL"]?.isEmpty == false || environment["HERALD_REQUIRE_POSTGRES"] == "1" {
            return [.sqlite, .postgres]
        }
        return [.sqlite]
    }
}

/// A fresh, migrated database for one test: a new SQLite file, or a new PostgreSQL database
/// created on the test server and dropped afterwards.
package final class TestDatabase: Sendable {
    package let backend: Backend
    package let database: any SQLDatabase
    package let store: Store
    /// The data directory (SQLite file, keys) of this test.
    package let directory: String
    /// The PostgreSQL URL of this test's database, if any.
    package let databaseURL: String?
    private let dropName: String?

    private init(backend: Backend, database: any SQLDatabase, store: Store, directory: String, databaseURL: String?, dropName: String?) {
        self.backend = backend
        self.database = database
        self.store = store
        self.directory = directory
        self.databaseURL = databaseURL
        self.dropName = dropName
    }

    package static let logger: Logger = {
        var logger = Logger(label: "herald-test")
        logger.logLevel = .warning
        return logger
    }()

    /// A new empty database, migrated, with a store using a fixed encryption key.
    package static func make(_ backend: Backend, clock: EpochClock = .system) async throws -> TestDatabase {
        let directory = NSTemporaryDirectory() + "herald-test-" + UUID().lowercasedString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let database: any SQLDatabase
        var url: String?
        var dropName: String?
        switch backend {
        case .sqlite:
            database = try await SQLiteStoreDatabase.open(path: directory + "/herald.sqlite", readerCount: 2, logger: logger)
        case .postgres:
            let (created, name) = try await createPostgresDatabase()
            url = created
            dropName = name
            database = try PostgresStoreDatabase(url: created, maximumConnections: 4, logger: logger)
        }
        let store = Store(
            database: database, secretBox: try SecretBox(keyBytes: Array(repeating: 7, count: 32)), clock: clock, logger: logger)
        try await store.migrator.migrate()
        return TestDatabase(backend: backend, database: database, store: store, directory: directory, databaseURL: url, dropName: dropName)
    }

    /// Closes and removes the database.
    package func close() async {
        await database.shutdown()
        if let dropName, let base = Self.postgresBaseURL {
            let admin = try? PostgresStoreDatabase(url: base, maximumConnections: 1, logger: Self.logger)
            _ = try? await admin?.query(SQL(unsafeText: "DROP DATABASE IF EXISTS \(dropName) WITH (FORCE)"))
            await admin?.shutdown()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    static var postgresBaseURL: String? {
        ProcessInfo.processInfo.environment["HERALD_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func createPostgresDatabase() async throws -> (url: String, name: String) {
        guard let base = postgresBaseURL, var components = URLComponents(string: base) else {
            throw StoreError(
                reason: .unavailable,
                message: "HERALD_TEST_POSTGRES_URL is not set: run the suite with scripts/test, which starts PostgreSQL")
        }
        let name = "herald_test_" + UUID().lowercasedString.replacingOccurrences(of: "-", with: "")
        let admin = try PostgresStoreDatabase(url: base, maximumConnections: 1, logger: logger)
        do {
            try await admin.query(SQL(unsafeText: "CREATE DATABASE \(name)"))
        } catch {
            await admin.shutdown()
            throw error
        }
        await admin.shutdown()
        components.path = "/" + name
        return (components.string ?? base, name)
    }
}

/// Runs `body` with a fresh database of `backend`, closing it afterwards whatever happens.
package func withTestDatabase<Result>(
    _ backend: Backend, clock: EpochClock = .system, _ body: (TestDatabase) async throws -> Result
) async throws -> Result {
    let database = try await TestDatabase.make(backend, clock: clock)
    do {
        let result = try await body(database)
        await database.close()
        return result
    } catch {
        await database.close()
        throw error
    }
}
