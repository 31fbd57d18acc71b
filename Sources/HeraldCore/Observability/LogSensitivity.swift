import Crypto

/// Whether logs may carry device tokens, credentials, keys and message bodies.
///
/// By default they may not: such a value is logged as `<redacted:…>` with a short SHA-256 prefix,
/// enough to tell two values apart or to match one an operator already knows, not to recover it.
/// `herald serve --log-sensitive` turns this off for debugging.
package struct LogSensitivity: Sendable, Equatable {
    /// Whether sensitive values are logged as they are.
    package var logsSensitiveValues: Bool

    package init(logsSensitiveValues: Bool = false) {
        self.logsSensitiveValues = logsSensitiveValues
    }

    /// The default: nothing sensitive in the logs.
    package static let redacted = LogSensitivity()
    /// Everything logged as it is (`--log-sensitive`).
    package static let verbose = LogSensitivity(logsSensitiveValues: true)

    /// `value` as it may be logged: itself with `--log-sensitive`, otherwise a short hash of it.
    package func loggable(_ value: String) -> String {
        guard !logsSensitiveValues else { return value }
        return Self.fingerprint(value)
    }

    /// `<redacted:` and the first 8 hex digits of the value's SHA-256 `>`.
    package static func fingerprint(_ value: String) -> String {
        let digest = Array(SHA256.hash(data: Array(value.utf8)))
        return "<redacted:" + Hex.encode(Array(digest.prefix(4))) + ">"
    }
}
