import NIOCore
import NIOEmbedded
import NIOHPACK
import Testing

@testable import HeraldHTTP

/// `HTTP2ConnectionHandler`'s stream accounting on an `EmbeddedChannel`: the frames it writes
/// are read back, the server's frames are fed in as bytes (`HTTP2TestServer`).
@Suite struct HTTP2ConnectionHandlerTests {
    private typealias Connection = HTTP2TestServer

    private static func describe(_ results: [HTTP2Response?]) -> [String] {
        HTTP2TestServer.describe(results)
    }

    @Test func oneStreamUntilTheServersSettingsThenAsManyAsAllowed() throws {
        let connection = try Connection()
        let batch = connection.send(5)
        #expect(try connection.opened() == [1])
        #expect(connection.handler.openStreams == 1)
        try connection.settings(maxConcurrentStreams: 3)
        #expect(try connection.opened() == [3, 5])
        #expect(connection.handler.openStreams == 3)
        try connection.answer(3)
        #expect(try connection.opened() == [7])
        try connection.answer(1)
        try connection.answer(5, status: 410)
        #expect(try connection.opened() == [9])
        try connection.answer(7)
        try connection.answer(9)
        #expect(connection.handler.openStreams == 0)
        #expect(Self.describe(batch.results) == ["200", "200", "410", "200", "200"])
        #expect(connection.channel.isActive)
    }

    /// RFC 9113 §6.5.2: a server whose first SETTINGS does not name a stream limit has none, so
    /// the handler's ceiling applies; a later SETTINGS without it keeps the limit it had.
    @Test func aFirstSettingsWithoutALimitMeansTheCeiling() throws {
        let connection = try Connection()
        _ = connection.send(5)
        #expect(try connection.opened() == [1])
        try connection.settings([(0x4, 1 << 20)])
        #expect(try connection.opened() == [3, 5, 7, 9])
        #expect(connection.handler.openStreams == 5)
        try connection.settings(maxConcurrentStreams: 2)
        try connection.settings([(0x4, 1 << 21)])
        _ = connection.send(1)
        #expect(try connection.opened() == [], "five open, the limit still 2")
        for stream in [1, 3, 5, 7] { try connection.answer(stream) }
        // Still limited to 2: with one left open, only one more starts.
        #expect(try connection.opened() == [11])
        #expect(connection.handler.openStreams == 2)
    }

    @Test func aLoweredLimitHoldsNewStreamsUntilEnoughClose() throws {
        let connection = try Connection()
        try connection.settings(maxConcurrentStreams: 3)
        let batch = connection.send(5)
        #expect(try connection.opened() == [1, 3, 5])
        try connection.settings(maxConcurrentStreams: 1)
        #expect(connection.handler.maximumStreams == 1)
        try connection.answer(1)
        try connection.answer(3)
        // Still one open: at the new limit.
        #expect(try connection.opened() == [])
        try connection.answer(5)
        #expect(try connection.opened() == [7])
        try connection.answer(7)
        #expect(try connection.opened() == [9])
        try connection.answer(9)
        #expect(Self.describe(batch.results) == ["200", "200", "200", "200", "200"])
    }

    @Test func aRefusedStreamIsNotSentAndFreesItsPlace() throws {
        let connection = try Connection()
        try connection.settings(maxConcurrentStreams: 2)
        let batch = connection.send(3)
        #expect(try connection.opened() == [1, 3])
        try connection.reset(1, code: 0x7)
        #expect(try connection.opened() == [5])
        try connection.reset(3, code: 0x2)
        #expect(connection.handler.openStreams == 1)
        try connection.answer(5)
        #expect(connection.handler.openStreams == 0)
        #expect(Self.describe(batch.results) == ["not sent", "failed", "200"])
    }

    @Test func aGoAwayReturnsTheUnprocessedStreamsAndClosesOnceDrained() throws {
        let connection = try Connection()
        try connection.settings(maxConcurrentStreams: 2)
        var unusable = 0
        connection.handler.onUnusable = { unusable += 1 }
        let batch = connection.send(4)
        #expect(try connection.opened() == [1, 3])
        try connection.goAway(lastStreamID: 1)
        #expect(unusable == 1)
        // Stream 3 was not processed and the queued two never left; stream 1 is still answered.
        #expect(Self.describe(batch.results) == ["waiting", "not sent", "not sent", "not sent"])
        #expect(connection.handler.openStreams == 1)
        #expect(connection.channel.isActive)
        let late = connection.send(1)
        #expect(Self.describe(late.results) == ["not sent"])
        try connection.answer(1)
        #expect(Self.describe(batch.results) == ["200", "not sent", "not sent", "not sent"])
        #expect(!connection.channel.isActive)
        #expect(unusable == 1)
    }

    @Test func aGoAwayWithNothingOpenClosesAtOnce() throws {
        let connection = try Connection()
        try connection.settings([])
        try connection.goAway(lastStreamID: 0)
        #expect(!connection.channel.isActive)
    }

    @Test func aClosedConnectionFailsWhatIsOnTheWireAndReturnsTheRest() throws {
        let connection = try Connection()
        try connection.settings(maxConcurrentStreams: 1)
        let batch = connection.send(2)
        #expect(try connection.opened() == [1])
        try connection.channel.close().wait()
        #expect(Self.describe(batch.results) == ["failed", "not sent"])
        #expect(connection.handler.openStreams == 0)
    }

    @Test func outOfStreamIDsTheConnectionStopsTakingRequests() throws {
        let connection = try Connection(firstStreamID: HTTP2StreamStateMachine.lastUsableStreamID)
        try connection.settings(maxConcurrentStreams: 10)
        var unusable = 0
        connection.handler.onUnusable = { unusable += 1 }
        let batch = connection.send(3)
        #expect(try connection.opened() == [Int(HTTP2StreamStateMachine.lastUsableStreamID)])
        #expect(unusable == 1)
        #expect(Self.describe(batch.results) == ["waiting", "not sent", "not sent"])
        try connection.answer(Int(HTTP2StreamStateMachine.lastUsableStreamID))
        #expect(!connection.channel.isActive)
    }

    // MARK: Framing

    @Test func settingsAreAcknowledgedAndPingsAnswered() throws {
        let connection = try Connection()
        try connection.settings(maxConcurrentStreams: 10)
        let ack = try connection.frames()
        #expect(ack.map(\.type) == [0x4] && ack.first?.flags == 0x1 && ack.first?.payload.readableBytes == 0)
        var opaque = ByteBuffer()
        opaque.writeInteger(UInt64(0x0102_0304_0506_0708))
        try connection.send(type: 0x6, streamID: 0, payload: opaque)
        let pong = try connection.frames()
        #expect(pong.count == 1 && pong[0].type == 0x6 && pong[0].flags == 0x1)
        #expect(pong.first?.payload.getInteger(at: pong[0].payload.readerIndex, as: UInt64.self) == 0x0102_0304_0506_0708)
        // An answer to a PING of its own is not answered again.
        try connection.send(type: 0x6, flags: 0x1, streamID: 0, payload: opaque)
        #expect(try connection.frames().isEmpty)
    }

    /// A body larger than the stream's window goes out as far as the window allows and the rest
    /// on WINDOW_UPDATE; a second stream's body waits behind it.
    @Test func bodiesWaitForWindowUpdates() throws {
        let connection = try Connection()
        try connection.settings([(0x3, 10), (0x4, 100)])  // each stream may send 100 bytes
        _ = try connection.frames()
        let batch = connection.send(2, body: ByteBuffer(repeating: 0x61, count: 300))
        var frames = try connection.frames()
        #expect(frames.map(\.type) == [0x1, 0x0, 0x1, 0x0])
        #expect(frames.filter { $0.type == 0x0 }.map(\.payload.readableBytes) == [100, 100])
        #expect(frames.allSatisfy { $0.flags & 0x1 == 0 }, "no stream ended")
        try connection.windowUpdate(1, 150)
        frames = try connection.frames()
        #expect(frames.map { "\($0.type)/\($0.streamID)/\($0.payload.readableBytes)/\($0.flags & 1)" } == ["0/1/150/0"])
        // A larger initial window applies to the open streams too (RFC 9113 §6.9.2).
        try connection.settings([(0x4, 1000)])
        frames = try connection.frames().filter { $0.type == 0x0 }
        #expect(frames.map { "\($0.streamID)/\($0.payload.readableBytes)/\($0.flags & 1)" } == ["1/50/1", "3/200/1"])
        try connection.answer(1)
        try connection.answer(3)
        #expect(Self.describe(batch.results) == ["200", "200"])
    }

    /// The connection's window (65,535 bytes until the server widens it) is shared by every
    /// stream: bodies beyond it wait for the server's WINDOW_UPDATE on stream 0.
    @Test func theConnectionWindowHoldsBodiesBeyondIt() throws {
        let connection = try Connection()
        try connection.settings([(0x3, 100)])
        _ = try connection.frames()
        let batch = connection.send(20, body: ByteBuffer(repeating: 0x62, count: 4096))
        var sent = try connection.frames().filter { $0.type == 0x0 }.reduce(0) { $0 + $1.payload.readableBytes }
        #expect(sent == 65_535)
        try connection.windowUpdate(0, 10_000)
        sent += try connection.frames().filter { $0.type == 0x0 }.reduce(0) { $0 + $1.payload.readableBytes }
        #expect(sent == 75_535)
        try connection.windowUpdate(0, 100_000)
        let rest = try connection.frames().filter { $0.type == 0x0 }
        sent += rest.reduce(0) { $0 + $1.payload.readableBytes }
        #expect(sent == 20 * 4096)
        #expect(rest.last.map { $0.flags & 0x1 == 0x1 && $0.streamID == 39 } == true)
        for stream in stride(from: 1, through: 39, by: 2) { try connection.answer(stream) }
        #expect(Self.describe(batch.results) == Array(repeating: "200", count: 20))
    }

    @Test func anAnswerInContinuationFramesIsJoined() throws {
        let connection = try Connection()
        try connection.settings(maxConcurrentStreams: 1)
        let batch = connection.send(1)
        _ = try connection.frames()
        var block = try connection.headerBlock([":status": "410", "apns-id": "abc"])
        let first = block.readSlice(length: 3)!
        try connection.send(type: 0x1, flags: 0x1, streamID: 1, payload: first)  // END_STREAM, no END_HEADERS
        #expect(Self.describe(batch.results) == ["waiting"])
        try connection.send(type: 0x9, flags: 0x4, streamID: 1, payload: block)
        guard case .answered(410, let headers, _)? = batch.results[0] else {
            Issue.record("not answered: \(batch.results)")
            return
        }
        #expect(headers.first(name: "apns-id") == "abc")
    }

    @Test func aLargeRequestHeaderBlockGoesInContinuationFrames() throws {
        let connection = try Connection(validatesHeaderBlocks: true)
        try connection.settings(maxConcurrentStreams: 1)
        _ = try connection.frames()
        let long = String(repeating: "v", count: 40_000)
        _ = connection.send(1, headers: [":method": "POST", ":path": "/", "x-long": long])
        let frames = try connection.frames().filter { $0.type != 0x0 }
        #expect(frames.map(\.type) == [0x1, 0x9, 0x9])
        #expect(frames.map(\.payload.readableBytes).allSatisfy { $0 <= 16_384 })
        #expect(frames.map { $0.flags & 0x4 } == [0, 0, 0x4], "END_HEADERS on the last only")
        #expect(try connection.decode(frames).first(name: "x-long") == long)
    }

    @Test func aMalformedFrameEndsTheConnectionWithAGoAway() throws {
        let connection = try Connection()
        try connection.settings(maxConcurrentStreams: 2)
        let batch = connection.send(3)
        #expect(try connection.opened() == [1, 3])
        var unusable = 0
        connection.handler.onUnusable = { unusable += 1 }
        // A PING of 7 bytes: FRAME_SIZE_ERROR (RFC 9113 §6.7).
        try? connection.send(type: 0x6, streamID: 0, payload: ByteBuffer(bytes: [1, 2, 3, 4, 5, 6, 7]))
        let goAway = try connection.frames().filter { $0.type == 0x7 }
        #expect(goAway.count == 1)
        #expect(goAway.first.map { $0.payload.getInteger(at: $0.payload.readerIndex + 4, as: UInt32.self) } == 0x6)
        #expect(!connection.channel.isActive)
        #expect(unusable == 1)
        // The two on the wire fail unanswered, the queued one goes elsewhere.
        #expect(Self.describe(batch.results) == ["failed", "failed", "not sent"])
        guard case .failed(let reason)? = batch.results[0] else { return }
        #expect(reason.contains("FRAME_SIZE_ERROR"))
    }

    @Test func anInvalidRequestHeaderFailsWithoutAStream() throws {
        let connection = try Connection(validatesHeaderBlocks: true)
        try connection.settings(maxConcurrentStreams: 5)
        _ = try connection.frames()
        let batch = connection.send(1, headers: [":method": "POST", ":path": "/", "x-note": "line\r\nbreak"])
        #expect(try connection.opened() == [])
        #expect(Self.describe(batch.results) == ["failed"])
        #expect(connection.handler.openStreams == 0)
    }

    /// HTTP/2 field names are lowercase tokens (RFC 9113 §8.2.1).
    @Test(arguments: ["X-Note", "x note", "x:note"])
    func aFieldNameThatIsNotALowercaseTokenFailsWithoutAStream(name: String) throws {
        let connection = try Connection(validatesHeaderBlocks: true)
        try connection.settings(maxConcurrentStreams: 5)
        _ = try connection.frames()
        let batch = connection.send(1, headers: [":method": "POST", ":path": "/", name: "value"])
        #expect(try connection.opened() == [])
        #expect(Self.describe(batch.results) == ["failed"])
    }
}
