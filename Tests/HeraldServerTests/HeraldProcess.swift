import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real `herald serve` process: the executable `swift build` put next to the test bundle,
/// started on a free port, its output kept in files for the failure messages.
final class HeraldProcess {
    let process: Process
    /// What the test calls it (its log files are named after it).
    let name: String
    /// The port it serves on (it was started with `--port 0` and said which).
    private(set) var port = 0
    private let outputPath: String
    private let errorPath: String

    /// `.build/<triple>/debug/herald`, beside the running test binary (`swift build` and
    /// `swift test` both build it).
    static func executable() throws -> URL {
        let running = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: running).deletingLastPathComponent()
        // On macOS the test binary sits inside a bundle: .build/debug/herald.xctest/Contents/MacOS/.
        while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
        let herald = directory.appendingPathComponent("herald")
        guard FileManager.default.isExecutableFile(atPath: herald.path) else {
            throw TestFailure(message: "the herald executable is not at \(herald.path): run `swift build` before the tests")
        }
        return herald
    }

    /// Starts `herald serve` with `arguments` (besides `--host`/`--port`) and `environment` (on top
    /// of this process's, without its HERALD_ variables), and waits until it serves.
    init(_ arguments: [String], environment: [String: String], logDirectory: String, name: String) async throws {
        self.name = name
        process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "0"] + arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        merged.merge(environment) { $1 }
        process.environment = merged
        outputPath = "\(logDirectory)/\(name).out"
        errorPath = "\(logDirectory)/\(name).err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        process.standardInput = FileHandle.nullDevice
        try process.run()

        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let port = Self.servingPort(in: output) {
                self.port = port
                return
            }
            guard process.isRunning else {
                throw TestFailure(message: "herald serve exited (\(process.terminationStatus)) before serving:\n\(errors)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(SIGKILL)
        throw TestFailure(message: "herald serve did not start serving in time:\n\(errors)")
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    /// Its whole log (standard error).
    var fullErrors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }
    /// The last of its log (standard error).
    var errors: String { String(((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "").suffix(4000)) }

    static func servingPort(in output: String) -> Int? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("Herald is serving http://") }),
            let port = line.split(separator: ":").last
        else { return nil }
        return Int(port)
    }

    var isRunning: Bool { process.isRunning }

    /// Sends `signal` (SIGKILL: no chance to clean up; SIGTERM: a graceful shutdown).
    func kill(_ signal: Int32) {
        guard process.isRunning else { return }
        #if canImport(Glibc)
            _ = Glibc.kill(process.processIdentifier, signal)
        #else
            _ = Darwin.kill(process.processIdentifier, signal)
        #endif
    }

    /// Waits for the process to end and returns its exit status; fails past the deadline
    /// (killing it, so that nothing is left behind).
    @discardableResult
    func waitForExit(within deadline: Duration = .seconds(30)) async throws -> (status: Int32, reason: Process.TerminationReason) {
        let end = ContinuousClock.now + deadline
        while process.isRunning {
            guard ContinuousClock.now < end else {
                kill(SIGKILL)
                throw TestFailure(message: "herald serve did not exit in time:\n\(errors)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return (process.terminationStatus, process.terminationReason)
    }
}
