import Foundation

/// CPU time a process has used (user + system), read from Linux's `/proc`: the benchmarks' measure
/// of work per item, which moves far less than wall time with the shared host's load.
enum ProcessCPU {
    /// `/proc/PID/stat`'s fields after "pid (comm) " (comm may hold spaces): `[0]` is field 3
    /// (state), `[1]` ppid, `[11]`–`[14]` utime, stime, cutime, cstime in clock ticks (proc(5)).
    /// Nil once the process has exited (or off Linux).
    private static func statFields(of pid: Int32) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 14 ? fields : nil
    }

    /// Clock ticks of `fields` (utime, stime, …) in seconds.
    private static func seconds(_ fields: ArraySlice<Substring>) -> Double {
        Double(fields.compactMap { Int($0) }.reduce(0, +)) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// `pid`'s utime + stime in seconds, nil once it has exited (or off Linux).
    static func seconds(of pid: Int32) -> Double? {
        statFields(of: pid).map { seconds($0[11...12]) }
    }

    /// The parent of `pid`, nil once it has exited (or off Linux).
    static func parent(of pid: Int32) -> Int32? {
        statFields(of: pid).flatMap { Int32($0[1]) }
    }

    /// CPU seconds of `root` and everything under it: its own, its children's that have exited
    /// (cutime + cstime) and its living children's. A PostgreSQL server's so: its postmaster and
    /// the backends, WAL writer and checkpointer it forks.
    static func treeSeconds(of root: Int32) -> Double? {
        guard let fields = statFields(of: root) else { return nil }
        var total = seconds(fields[11...14])
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != root, let child = statFields(of: pid), Int32(child[1]) == root else { continue }
            total += seconds(child[11...12])
        }
        return total
    }

    /// User + system seconds of this process's children that have exited and been waited for.
    static func childrenSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// A process's CPU seconds from now on; with `tree`, those of everything under it too.
    struct Span {
        let pid: Int32?
        let tree: Bool
        let start: Double?

        init(pid: Int32?, tree: Bool = false) {
            self.pid = pid
            self.tree = tree
            start = pid.flatMap(tree ? ProcessCPU.treeSeconds(of:) : ProcessCPU.seconds(of:))
        }

        /// The seconds used since `init`, nil if the process was not there to read.
        func elapsed() -> Double? {
            guard let pid, let start, let now = tree ? ProcessCPU.treeSeconds(of: pid) : ProcessCPU.seconds(of: pid) else { return nil }
            return now - start
        }
    }

    /// The 1-, 5- and 15-minute load averages, as `/proc/loadavg` gives them.
    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
