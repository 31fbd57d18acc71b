import HeraldHTTP
import Testing

/// A header block that breaks RFC 9113's field syntax (a line break in a value) is refused by
/// whichever side checks it: the client before sending, the mock on arrival; with both checks
/// off it goes through, as it would to a lenient server.
@Suite struct HeaderBlockValidationTests {
    private func send(clientValidates: Bool, mockValidates: Bool) async throws -> HTTP2Response {
        try await SignedMockAPNs.rawResponses(
            count: 1, change: { $0.validatesHeaderBlocks = mockValidates }, clientValidates: clientValidates,
            extra: [("x-note", "line\r\nbreak")])[0]
    }

    private func accepted(_ response: HTTP2Response) -> Bool {
        if case .answered(200, _, _) = response { return true }
        return false
    }

    @Test func aValidatingClientDoesNotSendIt() async throws {
        #expect(!accepted(try await send(clientValidates: true, mockValidates: false)))
    }

    @Test func aValidatingMockRefusesIt() async throws {
        #expect(!accepted(try await send(clientValidates: false, mockValidates: true)))
    }

    @Test func withBothChecksOffItIsAnswered() async throws {
        #expect(accepted(try await send(clientValidates: false, mockValidates: false)))
    }
}
