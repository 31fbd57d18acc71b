import Foundation

/// `--config FILE`: the settings of `herald serve` (and of the commands that open the database) read
/// from one JSON file, under the names of their flags (`"port": 8080`, `"database-url": "…"`) and
/// of their environment variables without `HERALD_` (`"encryption-key"`, `"apns-endpoint"`).
///
/// Precedence is flags > environment > file > defaults: a file value is used only where the
/// command line has no such flag and the environment no such variable. Secrets can be named by
/// file instead of given (`"admin-token-file"`, or `HERALD_ADMIN_TOKEN_FILE` in the environment), so
/// that they stay out of the unit file, the environment and `ps`. An unknown key is refused with
/// its name, so that a misspelt setting does not silently fall back to its default.
package struct ConfigFile: Sendable {
    /// What a key of the file sets.
    package enum Target: Sendable, Equatable {
        /// A `--name VALUE` option, overridden by the environment variable if it has one.
        case option(environment: String?)
        /// A `--name` flag without a value (a JSON boolean; `false` leaves it off).
        case flag
        /// Only an environment variable (the server reads it as it always did).
        case environment(String)
    }

    /// One setting: its key in the file, what it sets, and which commands take it.
    package struct Setting: Sendable {
        package let key: String
        package let target: Target
        /// False: only `herald serve` takes it (the other commands that read the file ignore it).
        package let everyCommand: Bool
        /// Whether `KEY-file` / `HERALD_…_FILE` may name a file holding the value.
        package let secret: Bool
    }

    /// Every setting the file may hold. `herald serve --help`'s options must all be here (a test
    /// compares them), so that a new option is readable from the file too.
    package static let settings: [Setting] = [
        // The database, read by serve, migrate, analytics prune, backup and restore.
        Setting(key: "data-dir", target: .option(environment: nil), everyCommand: true, secret: false),
        Setting(key: "database-url", target: .option(environment: "HERALD_DATABASE_URL"), everyCommand: true, secret: true),
        Setting(
            key: "database-connections", target: .option(environment: "HERALD_DATABASE_CONNECTIONS"), everyCommand: true, secret: false),
        Setting(key: "log-level", target: .option(environment: nil), everyCommand: true, secret: false),
        Setting(key: "encryption-key", target: .environment("HERALD_ENCRYPTION_KEY"), everyCommand: true, secret: true),
        Setting(key: "admin-token", target: .environment("HERALD_ADMIN_TOKEN"), everyCommand: true, secret: true),
        Setting(key: "apns-endpoint", target: .environment("HERALD_APNS_ENDPOINT"), everyCommand: true, secret: false),
        Setting(key: "extra-ca-file", target: .environment("HERALD_EXTRA_CA_FILE"), everyCommand: true, secret: false),
        Setting(key: "proxy", target: .environment("HERALD_PROXY"), everyCommand: true, secret: true),
        Setting(key: "fcm-endpoint", target: .environment("HERALD_FCM_ENDPOINT"), everyCommand: true, secret: false),
        Setting(key: "webpush-endpoint", target: .environment("HERALD_WEBPUSH_ENDPOINT"), everyCommand: true, secret: false),
        Setting(key: "wns-endpoint", target: .environment("HERALD_WNS_ENDPOINT"), everyCommand: true, secret: false),
        Setting(key: "wns-token-endpoint", target: .environment("HERALD_WNS_TOKEN_ENDPOINT"), everyCommand: true, secret: false),
        Setting(key: "wns-test-host", target: .environment("HERALD_WNS_TEST_HOST"), everyCommand: true, secret: false),
        // `herald serve` only.
        Setting(key: "host", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "port", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "workers", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "batch-size", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "job-lease", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "shutdown-grace", target: .option(environment: "HERALD_SHUTDOWN_GRACE"), everyCommand: false, secret: false),
        Setting(key: "idle-poll", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "analytics-retention-days", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "geofence-push-delay", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "log-sensitive", target: .flag, everyCommand: false, secret: false),
        Setting(key: "metrics-public", target: .flag, everyCommand: false, secret: false),
        Setting(key: "webhook-allow-private", target: .flag, everyCommand: false, secret: false),
        Setting(key: "webhook-workers", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "dashboard-assets", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "dashboard-map-tiles", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "dashboard-map-attribution", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(
            key: "send-immediately-within", target: .option(environment: "HERALD_SEND_IMMEDIATELY_WITHIN"), everyCommand: false,
            secret: false),
        Setting(key: "missed-occurrence-grace", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "import-max-bytes", target: .option(environment: nil), everyCommand: false, secret: false),
        Setting(key: "import-devices-per-transaction", target: .option(environment: nil), everyCommand: false, secret: false),
    ]

    /// What running a command with its configuration file comes to: the command line with the
    /// file's options added, and the environment variables the file sets.
    package struct Resolved: Sendable, Equatable {
        package var arguments: [String]
        package var environment: [String: String]
    }

    /// Reads `--config FILE` (if `arguments` has it) and the `HERALD_…_FILE` variables of
    /// `environment`, and returns the arguments and environment the command then runs with.
    /// `arguments` are the command line without the executable's name.
    package static func resolve(
        arguments: [String], environment: [String: String], readFile: (String) throws -> Data = ConfigFile.read
    ) throws(ConfigFileError) -> Resolved {
        var resolved = Resolved(arguments: arguments, environment: [:])
        // Secrets named by file in the environment: HERALD_X_FILE, unless HERALD_X itself is set.
        for setting in settings where setting.secret {
            let name = environmentName(of: setting)
            guard let path = environment[name + "_FILE"], !path.isEmpty, (environment[name] ?? "").isEmpty else { continue }
            resolved.environment[name] = try secret(at: path, for: name + "_FILE", readFile: readFile)
        }
        guard let path = configPath(in: arguments) else { return resolved }
        let command = arguments.first { !$0.hasPrefix("-") } ?? ""
        let data: Data
        do { data = try readFile(path) } catch { throw ConfigFileError("cannot read the configuration file \(path)") }
        let object: [String: Value]
        do { object = try JSONDecoder().decode([String: Value].self, from: data) } catch {
            throw ConfigFileError("\(path): not a JSON object of strings, numbers and true/false: \(error)")
        }
        let known = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })
        for key in object.keys.sorted() {
            let value = object[key]!  // a key of `object`
            var name = key
            var fromFile = false
            if known[key] == nil, key.hasSuffix("-file"), let base = known[String(key.dropLast(5))], base.secret {
                name = base.key
                fromFile = true
            }
            guard let setting = known[name] else {
                throw ConfigFileError("\(path): unknown key \"\(key)\" (known: \(settings.map(\.key).joined(separator: ", ")))")
            }
            guard setting.everyCommand || command == "serve" else { continue }
            let environmentName = environmentName(of: setting)
            // The environment wins over the file, a value given there or named by its _FILE variable.
            if let given = environment[environmentName], !given.isEmpty, setting.hasEnvironment { continue }
            if resolved.environment[environmentName] != nil { continue }
            var text: String
            switch value {
            case .string(let string): text = string
            case .integer(let number): text = String(number)
            case .boolean(let bool):
                guard case .flag = setting.target else {
                    throw ConfigFileError("\(path): \"\(key)\" takes a string or a number, not true/false")
                }
                if bool, !arguments.contains("--" + setting.key) { resolved.arguments.append("--" + setting.key) }
                continue
            }
            if case .flag = setting.target { throw ConfigFileError("\(path): \"\(key)\" takes true or false") }
            if fromFile { text = try secret(at: text, for: key, readFile: readFile) }
            switch setting.target {
            case .option:
                let flag = "--" + setting.key
                // The command line wins over the file.
                guard !arguments.contains(where: { $0 == flag || $0.hasPrefix(flag + "=") }) else { continue }
                resolved.arguments += [flag, text]
            case .environment(let variable):
                resolved.environment[variable] = text
            case .flag:
                continue
            }
        }
        return resolved
    }

    /// The file's contents.
    package static func read(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// The value of `--config FILE` or `--config=FILE`.
    private static func configPath(in arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--config", index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
        }
        return nil
    }

    /// The variable a setting is read from: its own, or HERALD_ and its key in capitals.
    private static func environmentName(of setting: Setting) -> String {
        switch setting.target {
        case .option(let variable?), .environment(let variable): return variable
        case .option(nil), .flag: return "HERALD_" + setting.key.uppercased().replacingOccurrences(of: "-", with: "_")
        }
    }

    /// A secret's file, without the line end editors add.
    private static func secret(at path: String, for name: String, readFile: (String) throws -> Data) throws(ConfigFileError) -> String {
        do {
            return String(decoding: try readFile(path), as: UTF8.self).trimmingCharacters(in: .newlines)
        } catch {
            throw ConfigFileError("\(name): cannot read \(path)")
        }
    }
}

extension ConfigFile {
    /// A value in the file: settings are strings, whole numbers or (flags) booleans.
    fileprivate enum Value: Decodable {
        case string(String)
        case integer(Int64)
        case boolean(Bool)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bool = try? container.decode(Bool.self) {
                self = .boolean(bool)
            } else if let number = try? container.decode(Int64.self) {
                self = .integer(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }
}

extension ConfigFile.Setting {
    /// Whether an environment variable also sets it (and then wins over the file).
    fileprivate var hasEnvironment: Bool {
        switch target {
        case .option(let variable): variable != nil
        case .environment: true
        case .flag: false
        }
    }
}

/// A configuration file or secret file that cannot be used, with the reason and the key.
package struct ConfigFileError: Error, CustomStringConvertible, Sendable {
    package let description: String
    init(_ description: String) { self.description = description }
}
