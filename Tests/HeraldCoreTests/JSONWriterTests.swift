import Foundation
import HeraldCore
import NIOCore
import Testing

@Suite struct JSONWriterTests {
    /// Whatever a string holds — quotes, backslashes, control characters, any script — it comes
    /// back unchanged from a JSON parser.
    @Test(arguments: ["plain", "a \"quoted\" \\ path", "line\nbreak\r\ttab", "\u{01}\u{1f}\u{7f}", "ünïcödé 日本 🚀", ""])
    func stringsSurviveARoundTrip(_ text: String) throws {
        var writer = JSONWriter()
        writer.field("text", text)
        writer.field("none", nil as String?)
        writer.field("count", Int64(-42))
        writer.field("flag", true)
        writer.textObjects("tags", [text, "b"])
        let buffer = writer.finish()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
        #expect(object["text"] as? String == text)
        #expect(object["none"] is NSNull)
        #expect(object["count"] as? Int == -42)
        #expect(object["flag"] as? Bool == true)
        #expect((object["tags"] as? [[String: String]])?.map { $0["text"] } == [text, "b"])

        var array = ByteBuffer()
        JSONWriter.string(text, into: &array)
        let decoded = try JSONSerialization.jsonObject(with: Data(array.readableBytesView), options: .fragmentsAllowed)
        #expect(decoded as? String == text)
    }
}
