import HeraldCore
import NIOHTTP1
import Testing

@testable import HeraldWNS

/// WNS's answers sorted into outcomes, without a server.
@Suite struct WNSOutcomeTests {
    let now = EpochClock.Instant(sinceEpoch: .seconds(1_800_000_000))

    func outcome(_ status: Int, _ headers: [(String, String)] = [], body: String = "") -> WNSOutcome {
        WNSOutcome(status: status, headers: HTTPHeaders(headers), body: body, now: now)
    }

    /// What a push's `failures` and the metrics count: the kind, never the channel URI the
    /// message quotes (it is the device's token).
    @Test func errorsCountUnderACodeThatQuotesNoChannel() {
        let error = WNSError.channelNotAllowed("https://evil.example.com/w/?token=secret is not a WNS channel")
        #expect(error.code == "ChannelNotAllowed")
        #expect(WNSError.invalidEndpoint("x").code == "InvalidEndpoint")
    }

    @Test func aDeliveryReportsWhatWNSDidWithIt() {
        #expect(
            outcome(200, [("X-WNS-Status", "received"), ("X-WNS-Msg-ID", "1ACF8D4C5A1B2E3F")])
                == .delivered(WNSDelivery(status: .received, messageID: "1ACF8D4C5A1B2E3F")))
        #expect(outcome(200, [("x-wns-status", "channelthrottled")]) == .delivered(WNSDelivery(status: .channelThrottled, messageID: nil)))
        #expect(
            outcome(200, [("x-wns-status", "dropped"), ("x-wns-deviceconnectionstatus", "disconnected")])
                == .delivered(WNSDelivery(status: .dropped, messageID: nil, deviceConnectionStatus: "disconnected")))
        #expect(outcome(200) == .delivered(WNSDelivery(status: .unknown(""), messageID: nil)))
    }

    @Test func eachStatusGoesToItsClass() {
        let classes: [(Int, String)] = [
            (400, "failed"), (401, "credentialsRejected"), (403, "credentialsRejected"), (404, "deviceGone"), (405, "failed"),
            (406, "retry"), (408, "retry"), (410, "deviceGone"), (413, "failed"), (418, "failed"), (429, "retry"), (500, "retry"),
            (502, "retry"), (503, "retry"),
        ]
        for (status, expected) in classes {
            let name =
                switch outcome(status) {
                case .delivered: "delivered"
                case .deviceGone: "deviceGone"
                case .retry: "retry"
                case .credentialsRejected: "credentialsRejected"
                case .failed: "failed"
                }
            #expect(name == expected, "HTTP \(status)")
        }
    }

    @Test func theRetryTimeComesFromContinueAfterOrRetryAfter() {
        func retryAfter(_ headers: [(String, String)]) -> Duration?? {
            guard case .retry(_, let seconds) = outcome(406, headers) else { return .none }
            return .some(seconds)
        }
        #expect(retryAfter([("X-WNS-CONTINUE-AFTER", "90"), ("Retry-After", "10")]) == .seconds(90))
        #expect(retryAfter([("Retry-After", "10")]) == .seconds(10))
        // 2027-01-15 08:01:00 GMT is 60 seconds after `now`.
        #expect(retryAfter([("x-wns-continue-after", "Fri, 15 Jan 2027 08:01:00 GMT")]) == .seconds(60))
        #expect(retryAfter([("x-wns-continue-after", "later")]) == .some(nil))
        #expect(retryAfter([]) == .some(nil))
    }

    @Test func theRejectionCarriesWNSsDescriptionAndTraceIds() {
        let answer = outcome(
            400, [("X-WNS-Error-Description", "Invalid X-WNS-Type"), ("X-WNS-Msg-ID", "M1"), ("X-WNS-Debug-Trace", "DB5SCH1")],
            body: "ignored")
        #expect(
            answer
                == .failed(
                    WNSRejection(status: 400, reason: .badRequest, message: "Invalid X-WNS-Type", messageID: "M1", debugTrace: "DB5SCH1")))
        #expect(outcome(400, body: "  a body  ") == .failed(WNSRejection(status: 400, reason: .badRequest, message: "a body")))
        #expect(outcome(413) == .failed(WNSRejection(status: 413, reason: .payloadTooLarge, message: "Payload Too Large")))
        #expect(WNSErrorReason(status: 418).name == "HTTP 418")
        #expect(WNSErrorReason(oauthError: "invalid_client") == .invalidClient)
        #expect(WNSErrorReason(oauthError: "access_denied").name == "access_denied")
    }
}
