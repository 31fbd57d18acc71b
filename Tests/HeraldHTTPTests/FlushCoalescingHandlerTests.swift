import NIOCore
import NIOEmbedded
import Testing

@testable import HeraldHTTP

@Suite struct FlushCoalescingHandlerTests {
    /// A channel whose writes land in `readOutbound` once flushed past the handler.
    private func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    @Test func theFlushesOfOneTickLeaveAsOne() throws {
        let channel = try channel()
        defer { _ = try? channel.finish() }
        for text in ["a", "b", "c"] {
            channel.write(IOData.byteBuffer(ByteBuffer(string: text)), promise: nil)
            channel.flush()
        }
        // Nothing has reached the socket yet: the flush waits for the loop's queued work.
        #expect(try channel.readOutbound(as: IOData.self) == nil)
        channel.embeddedEventLoop.run()
        var written: [String] = []
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = data else { continue }
            written.append(String(buffer: buffer))
        }
        #expect(written == ["a", "b", "c"])
    }

    @Test func aCloseFlushesWhatWasWrittenFirst() throws {
        let channel = try channel()
        channel.write(IOData.byteBuffer(ByteBuffer(string: "goaway")), promise: nil)
        channel.flush()
        // Closed before the loop ran the coalesced flush: the close itself must flush.
        try channel.close().wait()
        guard case .byteBuffer(let buffer)? = try channel.readOutbound(as: IOData.self) else {
            Issue.record("the write before the close never left")
            return
        }
        #expect(String(buffer: buffer) == "goaway")
    }

    @Test func writesWithoutAFlushStayBuffered() throws {
        let channel = try channel()
        defer { _ = try? channel.finish() }
        channel.write(IOData.byteBuffer(ByteBuffer(string: "x")), promise: nil)
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: IOData.self) == nil)
    }
}
