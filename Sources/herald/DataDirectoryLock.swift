import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on a data directory's SQLite database, held by `herald serve` for as long
/// as it runs: a second server on the same file (a restart while the old process still drains)
/// is refused at start, with the holder's pid, rather than running beside it.
///
/// An advisory `flock(2)` on `herald.sqlite.lock` beside the database: the kernel drops it when
/// the process ends, however it ends, so a crash leaves no stale lock behind.
final class DataDirectoryLock {
    private var descriptor: Int32

    /// Takes the lock, creating the directory and the lock file if needed; throws, naming the
    /// holder, if another live process has it.
    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/herald.sqlite.lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ValidationError("cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.readPID(descriptor)
            close(descriptor)
            throw ValidationError(
                "another Herald\(holder.map { " (pid \($0))" } ?? "") is serving the SQLite database in \(directory): "
                    + "stop it first (it exits once its deliveries in flight are done), or use another --data-dir")
        }
        // The holder's pid, for the message above.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        self.descriptor = descriptor
    }

    private static func readPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Lets go of the lock (the process is done with the database).
    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}
