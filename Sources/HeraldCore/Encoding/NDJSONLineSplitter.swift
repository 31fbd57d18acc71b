import NIOCore

import struct Foundation.Data

/// Cuts a stream of bytes (a streamed request body) into NDJSON lines, numbered from 1,
/// holding at most one line: a line longer than `maximumLineBytes` is reported as too long and
/// skipped to its end, so that no line can make the reader grow without bound.
package struct NDJSONLineSplitter: Sendable {
    /// One line of the stream.
    package enum Line: Sendable, Equatable {
        /// The line's bytes without its `\n` (nor a `\r` before it); blank lines are left out.
        case text(number: Int, Data)
        /// A line over the limit; its bytes were dropped.
        case tooLong(number: Int)
    }

    package let maximumLineBytes: Int
    /// The number of the line being read.
    public private(set) var lineNumber = 1
    private var partial = Data()
    private var overLimit = false

    package init(maximumLineBytes: Int) {
        self.maximumLineBytes = maximumLineBytes
    }

    /// Feeds the next bytes; `emit` receives every line they complete.
    package mutating func feed(_ buffer: ByteBuffer, _ emit: (Line) throws -> Void) rethrows {
        let view = buffer.readableBytesView
        var start = view.startIndex
        while start < view.endIndex {
            guard let newline = view[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                append(view[start...])
                return
            }
            append(view[start..<newline])
            try endLine(emit)
            start = newline + 1
        }
    }

    /// Ends the stream: a last line without `\n` is emitted.
    package mutating func finish(_ emit: (Line) throws -> Void) rethrows {
        if overLimit || !partial.isEmpty { try endLine(emit) }
    }

    private mutating func append(_ bytes: ByteBufferView.SubSequence) {
        guard !overLimit else { return }
        if partial.count + bytes.count > maximumLineBytes {
            overLimit = true
            partial.removeAll(keepingCapacity: true)
        } else {
            partial.append(contentsOf: bytes)
        }
    }

    private mutating func endLine(_ emit: (Line) throws -> Void) rethrows {
        let number = lineNumber
        lineNumber += 1
        if overLimit {
            overLimit = false
            try emit(.tooLong(number: number))
            return
        }
        if partial.last == UInt8(ascii: "\r") { partial.removeLast() }
        defer { partial.removeAll(keepingCapacity: true) }
        guard partial.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else { return }
        try emit(.text(number: number, partial))
    }
}
