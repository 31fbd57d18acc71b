import Foundation
import HeraldCore
import Testing

@Suite struct WebPushRendererTests {
    let now: Int64 = 1_800_000_000_000

    func render(_ json: String, receiptID: String? = "receipt-1") throws -> WebPushNotification? {
        let input = try JSONDecoder().decode(PushInput.self, from: Data(json.utf8))
        return try WebPushRenderer.render(try input.validated(now: now), receiptID: receiptID, now: now)
    }

    func object(_ notification: WebPushNotification?) throws -> [String: Any] {
        let payload = try #require(notification?.payload)
        return try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    @Test func theBodyBecomesANotificationWithTheReceipt() throws {
        let notification = try render(#"{"message":{"body":"Town Hall this Thursday"},"target":{"platforms":["web"]}}"#)
        #expect(notification?.payloadText == #"{"body":"Town Hall this Thursday","receiptId":"receipt-1"}"#)
        #expect(notification?.ttl == WebPushRenderer.maximumTTL)
        #expect(notification?.urgency == .normal)
        #expect(notification?.topic == nil)
    }

    @Test func customWebKeysJoinTheNotificationAndHeraldsOwnKeysSetTheHeaders() throws {
        let notification = try render(
            #"""
            {"message":{"body":"Town Hall","custom":{"web":{"title":"News","icon":"/i.png","actions":[{"action":"open","title":"Open"}],
              "urgency":"very-low","collapse_key":"town-hall"}}},"target":{"platforms":["web"]}}
            """#)
        let json = try object(notification)
        #expect(json["title"] as? String == "News")
        #expect(json["body"] as? String == "Town Hall")
        #expect(json["icon"] as? String == "/i.png")
        #expect((json["actions"] as? [[String: String]]) == [["action": "open", "title": "Open"]])
        #expect(json["receiptId"] as? String == "receipt-1")
        #expect(json["urgency"] == nil && json["collapse_key"] == nil)
        #expect(notification?.urgency == .veryLow)
        #expect(notification?.topic == "town-hall")
    }

    @Test func customWebBodyReplacesTheMessageBody() throws {
        let json = try object(
            try render(#"{"message":{"body":"plain","custom":{"web":{"body":"for browsers"}}},"target":{"platforms":["web"]}}"#))
        #expect(json["body"] as? String == "for browsers")
    }

    @Test func nothingForWebWhenThereIsNoBodyAndNoCustomWeb() throws {
        #expect(try render(#"{"message":{"custom":{"ios":{"badge":1}}},"target":{"platforms":["ios","web"]}}"#) == nil)
        // custom.web alone is enough: a service worker may handle data without a body.
        let dataOnly = try render(#"{"message":{"custom":{"web":{"data":{"sync":true}}}},"target":{"platforms":["web"]}}"#, receiptID: nil)
        #expect(dataOnly?.payloadText == #"{"data":{"sync":true}}"#)
    }

    @Test func expiryTimeBecomesTheTTLInWholeSecondsLeft() throws {
        let soon = try render(#"{"message":{"body":"x"},"target":{"platforms":["web"]},"expiryTime":\#(now + 90_001)}"#)
        #expect(soon?.ttl == 91)
        let past = try render(#"{"message":{"body":"x"},"target":{"platforms":["web"]},"expiryTime":\#(now - 5_000)}"#)
        #expect(past?.ttl == 0)
        let far = try render(#"{"message":{"body":"x"},"target":{"platforms":["web"]},"expiryTime":\#(now + 90 * 86_400_000)}"#)
        #expect(far?.ttl == WebPushRenderer.maximumTTL)
    }

    @Test func aLongOrUnsafeCollapseKeyBecomesAStableTopic() throws {
        let key = "news/town hall, Thursday the 14th of a long month"
        let topic = WebPushRenderer.topic(forCollapseKey: key)
        #expect(topic.utf8.count == 32)
        #expect(
            topic.utf8.allSatisfy {
                $0 < 0x80 && (Character(UnicodeScalar($0)).isLetter || Character(UnicodeScalar($0)).isNumber || $0 == 0x2d || $0 == 0x5f)
            })
        #expect(WebPushRenderer.topic(forCollapseKey: key) == topic)
        #expect(WebPushRenderer.topic(forCollapseKey: key + "!") != topic)
        #expect(WebPushRenderer.topic(forCollapseKey: "Abc_-123") == "Abc_-123")
    }

    @Test func refusesWhatAServiceWorkerOrPushServiceCouldNotTake() throws {
        #expect(throws: ValidationError(message: "must be very-low, low, normal or high", field: "message.custom.web.urgency")) {
            try render(#"{"message":{"body":"x","custom":{"web":{"urgency":"urgent"}}},"target":{"platforms":["web"]}}"#)
        }
        #expect(throws: ValidationError(code: "invalid_type", message: "must be a string", field: "message.custom.web.title")) {
            try render(#"{"message":{"body":"x","custom":{"web":{"title":7}}},"target":{"platforms":["web"]}}"#)
        }
        #expect(
            throws: ValidationError(code: "invalid_type", message: "must be a non-empty string", field: "message.custom.web.collapse_key")
        ) {
            try render(#"{"message":{"body":"x","custom":{"web":{"collapse_key":""}}},"target":{"platforms":["web"]}}"#)
        }
    }

    @Test func saysByHowMuchAMessageIsTooLarge() throws {
        // {"body":"…","receiptId":"receipt-1"} is 35 bytes around the body.
        let fits = String(repeating: "a", count: WebPushRenderer.maximumPayloadBytes - 35)
        let notification = try render(#"{"message":{"body":"\#(fits)"},"target":{"platforms":["web"]}}"#)
        #expect(notification?.payload.count == WebPushRenderer.maximumPayloadBytes)
        do {
            _ = try render(#"{"message":{"body":"\#(fits)bb"},"target":{"platforms":["web"]}}"#)
            Issue.record("a message over the limit was rendered")
        } catch let error as ValidationError {
            #expect(error.code == "payload_too_large")
            #expect(error.message == "the Web Push message would be 4098 bytes encrypted, 2 over the 4096-byte limit of push services")
        }
    }
}
