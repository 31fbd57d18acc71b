import Dispatch
import Foundation
import Synchronization

/// What a mock in benchmark mode keeps instead of the messages themselves: how many it accepted
/// and when each arrived (uptime nanoseconds, comparable across processes on one machine).
package final class ArrivalLog: Sendable {
    private let times = Mutex<[UInt64]>([])

    package init() {}

    /// Records one accepted message, now.
    package func record() {
        let now = DispatchTime.now().uptimeNanoseconds
        times.withLock { $0.append(now) }
    }

    /// Messages accepted so far.
    package var count: Int { times.withLock { $0.count } }

    /// Their arrival times, in the order recorded.
    package var arrivalTimes: [UInt64] { times.withLock { $0 } }

    /// Writes the arrival times to `path`, 8 bytes little-endian each.
    package func write(toFile path: String) throws {
        var bytes: [UInt8] = []
        let times = arrivalTimes
        bytes.reserveCapacity(times.count * 8)
        for time in times {
            withUnsafeBytes(of: time.littleEndian) { bytes.append(contentsOf: $0) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
