import HeraldHTTP
import NIOHPACK
import Testing

/// The one "no answer" error every provider returns: what it says (metrics and logs show it as
/// the `unanswered` reason) and which responses make one.
@Suite struct ProviderSendErrorTests {
    @Test func describesItselfAsTheThreeProviderErrorsDid() {
        #expect(ProviderSendError.notSent.description == "not sent")
        #expect(ProviderSendError.connectionFailed("connection reset by peer").description == "connection reset by peer")
        #expect(
            ProviderSendError.noAccessToken("the token endpoint timed out").description == "no access token: the token endpoint timed out")
        #expect(ProviderSendError.unknown("something else").description == "something else")
    }

    @Test func casesCompareByWhatTheyAre() {
        #expect(ProviderSendError.notSent == .notSent)
        #expect(ProviderSendError.connectionFailed("x") != .unknown("x"))
        #expect(ProviderSendError.connectionFailed("x") == .connectionFailed("x"))
    }

    @Test func onlyAResponseWithoutAnAnswerIsAnError() {
        #expect(ProviderSendError(HTTP2Response.notSent) == .notSent)
        #expect(ProviderSendError(HTTP2Response.failed("reset")) == .connectionFailed("reset"))
        #expect(ProviderSendError(HTTP2Response.answered(status: 200, headers: HPACKHeaders(), body: nil)) == nil)
    }
}
