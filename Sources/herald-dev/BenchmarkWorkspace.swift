import Foundation

/// A benchmark's scratch directory (databases, logs) under the system's temporary directory, the
/// path of this executable (`herald-dev`, which starts the mocks) and of the `herald` beside it,
/// which runs `herald serve`.
struct BenchmarkWorkspace {
    let executable: String
    let herald: String
    let directory: String

    init() throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        self.executable = executable.path
        herald = executable.deletingLastPathComponent().appendingPathComponent("herald").path
        guard FileManager.default.isExecutableFile(atPath: herald) else {
            throw BenchmarkError("no herald executable beside herald-dev at \(herald): build both (`swift build`)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Removes the directory, or with `keep` says where it stays.
    func finish(keep: Bool) {
        if keep { print("kept \(directory)") } else { try? FileManager.default.removeItem(atPath: directory) }
    }
}
