import HeraldCore
import HeraldStore
import Logging

import struct Foundation.Data
import class Foundation.FileManager
import struct Foundation.URL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens the database and the secrets a server needs, creating them on first start.
package enum Bootstrap {
    /// The tenant a fresh installation creates, where applications go when no tenant is named.
    package static let defaultTenantName = "default"

    /// What `open` prepared.
    package struct Opened: Sendable {
        package var store: Store
        /// Set when this start generated the root admin token (first start).
        package var generatedAdminToken: String?
        /// Where the generated token was written.
        package var adminTokenPath: String
    }

    /// Opens the configured database and applies pending migrations.
    package static func openDatabase(_ configuration: ServerConfiguration, logger: Logger) async throws -> any SQLDatabase {
        if let url = configuration.databaseURL, !url.isEmpty {
            return try PostgresStoreDatabase(url: url, maximumConnections: configuration.databaseConnections, logger: logger)
        }
        try createDirectory(configuration.dataDirectory)
        let path = configuration.dataDirectory + "/herald.sqlite"
        try makeOwnerOnly(databaseFile: path)
        return try await SQLiteStoreDatabase.open(path: path, logger: logger)
    }

    /// Opens the store, migrates it, and makes sure a default tenant and a root admin token exist.
    package static func open(_ configuration: ServerConfiguration, logger: Logger, clock: EpochClock = .system) async throws -> Opened {
        let database = try await openDatabase(configuration, logger: logger)
        do {
            let secretBox = try loadSecretBox(configuration, logger: logger)
            let store = Store(database: database, secretBox: secretBox, clock: clock, logger: logger)
            try await store.migrator.migrate()
            if try await store.tenants.find(name: defaultTenantName) == nil {
                _ = try await store.tenants.create(name: defaultTenantName)
            }
            let tokenPath = configuration.dataDirectory + "/admin-token"
            var generated: String?
            if let token = configuration.adminToken, !token.isEmpty {
                if try await store.adminTokens.authenticate(token) == nil {
                    _ = try await store.adminTokens.create(tenantID: nil, name: "root (from configuration)", token: token)
                }
            } else if try await !store.adminTokens.hasRootToken() {
                let (_, token) = try await store.adminTokens.create(tenantID: nil, name: "root")
                try createDirectory(configuration.dataDirectory)
                try writePrivateFile(tokenPath, contents: token + "\n")
                generated = token
            }
            return Opened(store: store, generatedAdminToken: generated, adminTokenPath: tokenPath)
        } catch {
            await database.shutdown()
            throw error
        }
    }

    /// The encryption key from the configuration, or from `encryption.key` in the data
    /// directory, generated there (mode 0600) on first use.
    package static func loadSecretBox(_ configuration: ServerConfiguration, logger: Logger) throws -> SecretBox {
        if let key = configuration.encryptionKey, !key.isEmpty {
            return try SecretBox(encodedKey: key)
        }
        try createDirectory(configuration.dataDirectory)
        let path = configuration.dataDirectory + "/encryption.key"
        if let data = FileManager.default.contents(atPath: path) {
            return try SecretBox(encodedKey: String(decoding: data, as: UTF8.self))
        }
        let key = SecretBox.generateEncodedKey()
        try writePrivateFile(path, contents: key + "\n")
        logger.notice("generated the encryption key for credentials at rest", metadata: ["path": "\(path)"])
        return try SecretBox(encodedKey: key)
    }

    static func createDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Creates the SQLite database file readable and writable by its owner only (mode 0600), or
    /// narrows an existing one and its `-wal`/`-shm` files to that: they hold device tokens and
    /// message bodies. SQLite gives the `-wal` and `-shm` files it creates later the database
    /// file's mode, so creating the file first is enough for them.
    static func makeOwnerOnly(databaseFile path: String) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT, 0o600)
        guard fd >= 0 else {
            throw BootstrapError(message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        _ = Glibc.close(fd)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            guard chmod(file, 0o600) == 0 else {
                throw BootstrapError(message: "cannot make \(file) private: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Writes a file readable by its owner only, failing rather than replacing an existing one.
    static func writePrivateFile(_ path: String, contents: String) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            throw BootstrapError(message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { _ = Glibc.close(fd) }
        let bytes = Array(contents.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            throw BootstrapError(message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// A start-up step failed.
package struct BootstrapError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

extension Bootstrap.Opened: RedactingDescription {
    package var description: String {
        "Opened(generatedAdminToken: \(secretPlaceholder(generatedAdminToken)), adminTokenPath: \(adminTokenPath))"
    }
}
