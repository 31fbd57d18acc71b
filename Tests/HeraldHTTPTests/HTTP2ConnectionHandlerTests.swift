import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import HeraldHTTP

/// `HTTP2ConnectionHandler`'s stream accounting on an `EmbeddedChannel`: the frames it writes
/// are read back, the server's frames are fed in.
@Suite struct HTTP2ConnectionHandlerTests {
    private struct Connection {
        let channel: EmbeddedChannel
        let handler: HTTP2ConnectionHandler

        init(firstStreamID: Int32 = 1) throws {
            handler = HTTP2ConnectionHandler(requestTimeout: .seconds(30), firstStreamID: firstStreamID)
            channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            // The receive window opened on activation.
            _ = try channel.readOutbound(as: HTTP2Frame.self)
        }

        /// Hands `count` requests over as one batch.
        func send(_ count: Int) -> HTTP2ConnectionHandler.Batch {
            let requests = (0..<count).map { _ in
                HTTP2Request(headers: [":method": "POST", ":path": "/"], body: ByteBuffer(string: "x"))
            }
            let batch = HTTP2ConnectionHandler.Batch(requests: requests, promise: channel.eventLoop.makePromise())
            handler.enqueue(batch)
            return batch
        }

        /// The streams whose HEADERS the handler wrote since the last call.
        func opened() throws -> [Int] {
            var streams: [Int] = []
            while let frame = try channel.readOutbound(as: HTTP2Frame.self) {
                if case .headers = frame.payload { streams.append(Int(frame.streamID)) }
            }
            return streams
        }

        func receive(_ streamID: Int, _ payload: HTTP2Frame.FramePayload) throws {
            try channel.writeInbound(HTTP2Frame(streamID: HTTP2StreamID(streamID), payload: payload))
            channel.embeddedEventLoop.run()
        }

        func answer(_ streamID: Int, status: Int = 200) throws {
            try receive(streamID, .headers(.init(headers: [":status": "\(status)"], endStream: true)))
        }

        func settings(maxConcurrentStreams: Int) throws {
            try receive(0, .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)])))
        }
    }

    private static func describe(_ results: [HTTP2Response?]) -> [String] {
        results.map { response in
            switch response {
            case .answered(let status, _, _)?: "\(status)"
            case .notSent?: "not sent"
            case .failed?: "failed"
            case nil: "waiting"
            }
        }
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
        try connection.receive(0, .settings(.settings([HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20)])))
        #expect(try connection.opened() == [3, 5, 7, 9])
        #expect(connection.handler.openStreams == 5)
        try connection.settings(maxConcurrentStreams: 2)
        try connection.receive(0, .settings(.settings([HTTP2Setting(parameter: .initialWindowSize, value: 1 << 21)])))
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
        try connection.receive(1, .rstStream(.refusedStream))
        #expect(try connection.opened() == [5])
        try connection.receive(3, .rstStream(.internalError))
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
        try connection.receive(0, .goAway(lastStreamID: 1, errorCode: .noError, opaqueData: nil))
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
        try connection.receive(0, .goAway(lastStreamID: 0, errorCode: .noError, opaqueData: nil))
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
}
