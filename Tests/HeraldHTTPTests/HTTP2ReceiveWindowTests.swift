import HeraldHTTP
import NIOCore
import NIOHTTP2
import Testing

@Suite struct HTTP2ReceiveWindowTests {
    private func data(_ count: Int, padding: Int? = nil) -> HTTP2Frame.FramePayload.Data {
        var data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(ByteBuffer(repeating: 0, count: count)))
        data.paddingBytes = padding
        return data
    }

    private func increment(_ frame: HTTP2Frame?) -> Int? {
        guard let frame, frame.streamID == .rootStream, case .windowUpdate(let increment) = frame.payload else { return nil }
        return increment
    }

    @Test func opensTheWindowFromHTTP2sDefault() {
        #expect(increment(HTTP2ReceiveWindow.opening) == HTTP2ReceiveWindow.size - 65_535)
    }

    @Test func givesBackWhatWasUsedOnceAQuarterIs() {
        var window = HTTP2ReceiveWindow()
        let quarter = HTTP2ReceiveWindow.size / 4
        #expect(window.received(data(quarter - 1_000)) == nil)
        // Padding counts, with its length byte: 744 + 255 + 1 reach the quarter exactly.
        #expect(increment(window.received(data(744, padding: 255))) == quarter)
        // And the count starts again.
        #expect(window.received(data(1)) == nil)
    }
}
