import Foundation
import NIOCore
import Synchronization

/// A file read in 1 MiB chunks, as a request body, reporting progress as it is sent.
package struct FileChunks: AsyncSequence, Sendable {
    package typealias Element = ByteBuffer
    let handle: FileHandle
    package let progress: ProgressBox

    /// The progress, shared by the sequence and its iterator.
    package final class ProgressBox: Sendable {
        package let state: Mutex<TransferProgress>
        init(_ progress: TransferProgress) { state = Mutex(progress) }
    }

    package init(handle: FileHandle, total: Int64, quiet: Bool = false) {
        self.handle = handle
        self.progress = ProgressBox(TransferProgress(verb: "sent", total: total, quiet: quiet))
    }

    package struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle
        let progress: ProgressBox

        package mutating func next() async throws -> ByteBuffer? {
            guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else { return nil }
            let lines = data.lazy.filter { $0 == UInt8(ascii: "\n") }.count
            progress.state.withLock { $0.advance(bytes: data.count, lines: lines) }
            return ByteBuffer(bytes: data)
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(handle: handle, progress: progress)
    }
}
