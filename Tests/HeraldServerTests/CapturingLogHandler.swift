import Logging
import Synchronization

/// Every log line a test's loggers wrote, rendered with its metadata.
final class CapturedLogs: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }
    var text: String { all.joined(separator: "\n") }

    func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    /// A logger at `level` that writes here.
    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "herald-captured") { label in CapturingLogHandler(label: label, logs: self) }
        logger.logLevel = level
        return logger
    }
}

/// A `LogHandler` that keeps each line (level, message, all metadata) in `CapturedLogs`.
struct CapturingLogHandler: LogHandler {
    let label: String
    let logs: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let error = event.error.map { " error=\($0)" } ?? ""
        logs.append("\(event.level) \(label): \(event.message) \(rendered)\(error)")
    }
}
