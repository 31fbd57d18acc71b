import HeraldCore
import HeraldHTTP
import NIOCore
import Testing

@testable import HeraldFCM

/// Reading Google's answers without a server: the error shapes of the FCM v1 documentation.
@Suite struct FCMErrorBodyTests {
    func read(_ status: Int, _ json: String) -> FCMErrorBody {
        FCMErrorBody(status: status, body: ByteBuffer(string: json))
    }

    @Test func theFCMErrorCodeWinsOverTheStatus() {
        let body = read(
            404,
            #"""
            {"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND",
              "details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}
            """#)
        #expect(body.reason == .unregistered)
        #expect(body.reason.meansDeviceGone)
        #expect(body.message == "Requested entity was not found.")
    }

    @Test func withoutAnFCMErrorTheStatusIsTheReason() {
        let body = read(
            401, #"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#)
        #expect(body.reason == .unauthenticated)
        #expect(body.reason.meansCredentialsRejected)
        let bare = read(502, "<html>Bad Gateway</html>")
        #expect(bare.reason.name == "HTTP 502")
        #expect(bare.message == "HTTP 502")
    }

    @Test func anInvalidArgumentIsAboutTheTokenOnlyWhenItSaysSo() {
        let token = read(
            400,
            #"""
            {"error":{"code":400,"message":"The registration token is not a valid FCM registration token","status":"INVALID_ARGUMENT",
              "details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"INVALID_ARGUMENT"}]}}
            """#)
        #expect(token.reason == .invalidArgument && token.isAboutTheRegistrationToken)

        let tokenField = read(
            400,
            #"""
            {"error":{"code":400,"message":"Invalid value","status":"INVALID_ARGUMENT",
              "details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token","description":"bad"}]}]}}
            """#)
        #expect(tokenField.badFields == ["message.token"])
        #expect(tokenField.isAboutTheRegistrationToken)

        let dataField = read(
            400,
            #"""
            {"error":{"code":400,"message":"Invalid value at 'message.data[0].value' (TYPE_STRING), 12","status":"INVALID_ARGUMENT",
              "details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.data[0].value"}]}]}}
            """#)
        #expect(dataField.reason == .invalidArgument)
        #expect(!dataField.isAboutTheRegistrationToken)
    }

    @Test func aDeliveredAnswerCarriesTheMessageName() {
        let body = read(200, #"{"name":"projects/demo/messages/0:1500415314455276%31bd1c9631bd1c96"}"#)
        #expect(body.messageName == "projects/demo/messages/0:1500415314455276%31bd1c9631bd1c96")
    }

    @Test func retryAfterIsSecondsOrAnHTTPDate() {
        let now = EpochClock.Instant(sinceEpoch: .seconds(1_445_412_480))  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(RetryAfter.delay("120", at: now) == .seconds(120))
        #expect(RetryAfter.delay(" 5 ", at: now) == .seconds(5))
        #expect(RetryAfter.delay("Wed, 21 Oct 2015 07:29:30 GMT", at: now) == .seconds(90))
        #expect(RetryAfter.delay("Wed, 21 Oct 2015 07:00:00 GMT", at: now) == .seconds(0))
        #expect(RetryAfter.delay("soon", at: now) == nil)
        #expect(RetryAfter.delay(nil, at: now) == nil)
    }
}
