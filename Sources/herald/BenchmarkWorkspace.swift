import Foundation

/// A benchmark's scratch directory (databases, logs) under the system's temporary directory, and
/// the path of this executable, which starts `herald serve` and the mocks.
struct BenchmarkWorkspace {
    let executable: String
    let directory: String

    init() throws {
        executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Removes the directory, or with `keep` says where it stays.
    func finish(keep: Bool) {
        if keep { print("kept \(directory)") } else { try? FileManager.default.removeItem(atPath: directory) }
    }
}
