import Foundation
import HeraldCommandLine
import Testing

/// `--config FILE` and the `*_FILE` secrets: precedence flags > environment > file > defaults,
/// unknown keys refused by name, secrets read from files.
@Suite struct ConfigFileTests {
    /// Files by path, for `ConfigFile.resolve(readFile:)`.
    private static func files(_ contents: [String: String]) -> (String) throws -> Data {
        { path in
            guard let text = contents[path] else { throw CocoaError(.fileNoSuchFile) }
            return Data(text.utf8)
        }
    }

    @Test func fileOptionsJoinTheCommandLineAfterTheFlagsGiven() throws {
        let read = Self.files([
            "/etc/herald.json": #"{"port": 9090, "host": "0.0.0.0", "workers": 2, "metrics-public": true, "log-sensitive": false}"#
        ])
        let resolved = try ConfigFile.resolve(
            arguments: ["serve", "--config", "/etc/herald.json", "--port", "7070"], environment: [:], readFile: read)
        // --port on the command line wins; the file gives host, workers and the flag it turns on.
        #expect(!resolved.arguments.contains("9090"))
        #expect(resolved.arguments.filter { $0 == "--port" }.count == 1)
        #expect(resolved.arguments.contains("--host"))
        #expect(resolved.arguments[resolved.arguments.firstIndex(of: "--host")! + 1] == "0.0.0.0")
        #expect(resolved.arguments[resolved.arguments.firstIndex(of: "--workers")! + 1] == "2")
        #expect(resolved.arguments.contains("--metrics-public"))
        #expect(!resolved.arguments.contains("--log-sensitive"))
    }

    @Test func environmentWinsOverTheFileAndTheFileOverDefaults() throws {
        let read = Self.files([
            "c.json": #"{"database-url": "postgres://file/db", "encryption-key": "from-file", "apns-endpoint": "https://file:1"}"#
        ])
        let resolved = try ConfigFile.resolve(
            arguments: ["serve", "--config=c.json"],
            environment: ["HERALD_DATABASE_URL": "postgres://env/db", "HERALD_ENCRYPTION_KEY": "from-env"], readFile: read)
        #expect(!resolved.arguments.contains("--database-url"))
        #expect(resolved.environment["HERALD_ENCRYPTION_KEY"] == nil)  // the process's own stays
        #expect(resolved.environment["HERALD_APNS_ENDPOINT"] == "https://file:1")
        // Without the environment, the file's values apply.
        let fromFile = try ConfigFile.resolve(arguments: ["serve", "--config=c.json"], environment: [:], readFile: read)
        #expect(fromFile.arguments.suffix(2) == ["--database-url", "postgres://file/db"])
        #expect(fromFile.environment["HERALD_ENCRYPTION_KEY"] == "from-file")
    }

    @Test func unknownKeysAreRefusedByName() throws {
        let read = Self.files(["c.json": #"{"port": 8080, "prot": 9090}"#])
        let error = #expect(throws: ConfigFileError.self) {
            try ConfigFile.resolve(arguments: ["serve", "--config", "c.json"], environment: [:], readFile: read)
        }
        #expect(error?.description.contains("unknown key \"prot\"") == true)
        // A known key of the wrong type is named too.
        let wrong = Self.files(["c.json": #"{"port": true}"#])
        let typeError = #expect(throws: ConfigFileError.self) {
            try ConfigFile.resolve(arguments: ["serve", "--config", "c.json"], environment: [:], readFile: wrong)
        }
        #expect(typeError?.description.contains("\"port\"") == true)
        // `-file` exists only for secrets.
        let notSecret = Self.files(["c.json": #"{"port-file": "/x"}"#])
        #expect(throws: ConfigFileError.self) {
            try ConfigFile.resolve(arguments: ["serve", "--config", "c.json"], environment: [:], readFile: notSecret)
        }
    }

    @Test func secretsAreReadFromFilesNamedInTheEnvironmentOrTheFile() throws {
        let read = Self.files([
            "/run/secrets/key": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
            "/run/secrets/token": "root-token\n",
            "/run/secrets/url": "postgres://herald:pw@db/herald\n",
            "c.json": #"{"admin-token-file": "/run/secrets/token", "database-url-file": "/run/secrets/url"}"#,
        ])
        let resolved = try ConfigFile.resolve(
            arguments: ["serve", "--config", "c.json"], environment: ["HERALD_ENCRYPTION_KEY_FILE": "/run/secrets/key"], readFile: read)
        #expect(resolved.environment["HERALD_ENCRYPTION_KEY"] == "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
        #expect(resolved.environment["HERALD_ADMIN_TOKEN"] == "root-token")
        #expect(resolved.arguments.suffix(2) == ["--database-url", "postgres://herald:pw@db/herald"])
        // The variable itself wins over its _FILE; an unreadable secret file is an error naming it.
        let both = try ConfigFile.resolve(
            arguments: ["serve"], environment: ["HERALD_ADMIN_TOKEN": "given", "HERALD_ADMIN_TOKEN_FILE": "/run/secrets/token"],
            readFile: read)
        #expect(both.environment["HERALD_ADMIN_TOKEN"] == nil)
        let error = #expect(throws: ConfigFileError.self) {
            try ConfigFile.resolve(arguments: ["serve"], environment: ["HERALD_ADMIN_TOKEN_FILE": "/missing"], readFile: read)
        }
        #expect(error?.description.contains("HERALD_ADMIN_TOKEN_FILE") == true)
    }

    @Test func otherCommandsTakeOnlyTheDatabaseSettings() throws {
        let read = Self.files(["c.json": #"{"data-dir": "/var/lib/herald", "port": 9090}"#])
        let resolved = try ConfigFile.resolve(arguments: ["migrate", "--config", "c.json"], environment: [:], readFile: read)
        #expect(resolved.arguments == ["migrate", "--config", "c.json", "--data-dir", "/var/lib/herald"])
    }

    /// Every option `herald serve --help` lists can be set from the file: a new option must be
    /// added to `ConfigFile.settings` too.
    @Test func everyServeOptionIsASetting() throws {
        let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: running).deletingLastPathComponent()
        while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
        let herald = directory.appendingPathComponent("herald")
        try #require(FileManager.default.isExecutableFile(atPath: herald.path), "run `swift build` before the tests: no \(herald.path)")
        let process = Process()
        process.executableURL = herald
        process.arguments = ["serve", "--help"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let help = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let options = Set(
            help.split(separator: "\n").compactMap { line -> String? in
                guard let range = line.range(of: #"^\s+(-\w, )?--[a-z-]+"#, options: .regularExpression) else { return nil }
                return String(line[range].split(separator: " ").last!.dropFirst(2))
            })
        #expect(options.contains("port"))
        let settings = Set(ConfigFile.settings.map(\.key))
        // --config itself, --help and the negations ArgumentParser adds are not settings.
        let missing = options.subtracting(settings).subtracting(["config", "help", "version"]).filter { !$0.hasPrefix("no-") }
        #expect(missing.isEmpty, "herald serve options missing from ConfigFile.settings: \(missing.sorted())")
    }
}
