import Foundation

/// A process the benchmark starts (the mock, the server, h2load), its output in a log file.
final class ChildProcess {
    let name: String
    let logPath: String
    private let process = Process()

    init(name: String, executable: String, arguments: [String], environment: [String: String] = [:], logPath: String) throws {
        self.name = name
        self.logPath = logPath
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// What the process wrote so far.
    var output: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Waits until the output has a line containing `marker` and returns that line.
    func waitForLine(containing marker: String, timeout: Duration) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = output.split(separator: "\n").first(where: { $0.contains(marker) }) {
                return String(line)
            }
            guard process.isRunning else {
                throw BenchmarkError("\(name) exited (status \(process.terminationStatus)); its output is in \(logPath)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw BenchmarkError("\(name) did not say '\(marker)' within \(timeout); its output is in \(logPath)")
    }

    /// A field of `/proc/PID/status` in KiB (`VmRSS`, `VmHWM`).
    func memoryKiB(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return nil
    }

    /// SIGTERM, then SIGKILL if it has not exited within `grace`.
    func stop(grace: Duration = .seconds(10)) async {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + grace
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Waits for the process to exit by itself.
    func waitForExit(timeout: Duration) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("\(name) did not finish within \(timeout); its output is in \(logPath)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }
}

/// The benchmark could not run.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
