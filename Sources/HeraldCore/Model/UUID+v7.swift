#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import struct Foundation.UUID

extension UUID {
    /// A version 7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits.
    ///
    /// Device uuids are v7 so that new rows land at the end of the uuid index instead of on a
    /// random page of it, which keeps a registration's write small on both backends.
    public static func timeOrdered(milliseconds: Int64) -> UUID {
        let time = UInt64(max(0, milliseconds))
        let (a, b) = RandomWords.shared.pair()
        func byte(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (8 * index)) }
        return UUID(uuid: (
            byte(time, 5), byte(time, 4), byte(time, 3), byte(time, 2), byte(time, 1), byte(time, 0),
            0x70 | (byte(a, 0) & 0x0f), byte(a, 1), 0x80 | (byte(a, 2) & 0x3f), byte(a, 3),
            byte(b, 0), byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5)))
    }
}

/// Random 64-bit words from the system's generator, read 4 KiB at a time. A uuid took its random
/// bytes through swift-crypto's `SymmetricKey`, two `getrandom` system calls and two allocations
/// each: 1.4 % of herald's CPU in a SQLite registration profile (`perf record -g` of `herald serve`
/// under scripts/bench-registration's wrk load, 2026-11-27). Each word is handed out once.
final class RandomWords: Sendable {
    static let shared = RandomWords()

    private struct State {
        var words = [UInt64](repeating: 0, count: 512)
        var next = 512
        /// /dev/urandom, opened at the first refill (Glibc's module does not offer `getrandom`).
        var source: Int32 = -1
    }

    private let state = Mutex(State())

    /// Two words no one else is given.
    func pair() -> (UInt64, UInt64) {
        state.withLock { state in
            if state.next + 2 > state.words.count {
                var source = state.source
                state.words.withUnsafeMutableBytes { Self.fill($0, source: &source) }
                state.source = source
                state.next = 0
            }
            defer { state.next += 2 }
            return (state.words[state.next], state.words[state.next + 1])
        }
    }

    private static func fill(_ buffer: UnsafeMutableRawBufferPointer, source: inout Int32) {
        #if canImport(Darwin)
        arc4random_buf(buffer.baseAddress, buffer.count)
        #else
        #if canImport(Glibc)
        if source < 0 { source = open("/dev/urandom", O_RDONLY | O_CLOEXEC) }
        var offset = 0
        while source >= 0, offset < buffer.count {
            let count = read(source, buffer.baseAddress! + offset, buffer.count - offset)
            if count > 0 { offset += count } else if errno != EINTR { break }
        }
        if offset == buffer.count { return }
        #endif
        // Where /dev/urandom is missing or failed: the standard library's generator.
        var generator = SystemRandomNumberGenerator()
        for index in stride(from: 0, to: buffer.count, by: 8) {
            buffer.storeBytes(of: generator.next() as UInt64, toByteOffset: index, as: UInt64.self)
        }
        #endif
    }
}
