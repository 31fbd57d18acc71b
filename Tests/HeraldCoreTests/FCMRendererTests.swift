import Foundation
import HeraldCore
import Testing

@Suite struct FCMRendererTests {
    let now: Int64 = 1_800_000_000_000

    func push(_ json: String) throws -> Push {
        try JSONDecoder().decode(PushInput.self, from: Data(json.utf8)).validated(now: now)
    }

    func render(_ json: String, receiptID: String? = "receipt-1", notificationByDefault: Bool = false) throws -> FCMMessage {
        try #require(try FCMRenderer.render(push(json), receiptID: receiptID, now: now, notificationByDefault: notificationByDefault))
    }

    /// The default is a data message, as Pivotal sent: the PCF Android SDK's FcmMessagingService
    /// gets it in the background too, logs it received (receiptId) and hands `data` to the app.
    @Test func theBodyBecomesDataMessageInADataMessage() throws {
        let message = try render(#"{"message":{"body":"Town Hall this Thursday"},"target":{"platform":"android"}}"#)
        #expect(message.data == ["message": "Town Hall this Thursday", "receiptId": "receipt-1"])
        #expect(message.notification == nil)
        #expect(message.android == FCMMessage.AndroidConfig())
        #expect(message.jsonText == #"{"data":{"message":"Town Hall this Thursday","receiptId":"receipt-1"}}"#)
    }

    /// A platform with `fcm_notification` adds the notification block (Android shows it itself).
    @Test func aNotifyingPlatformAddsTheNotificationBody() throws {
        let message = try render(
            #"{"message":{"body":"Town Hall this Thursday"},"target":{"platform":"android"}}"#, notificationByDefault: true)
        #expect(message.data == ["message": "Town Hall this Thursday", "receiptId": "receipt-1"])
        #expect(message.notification == FCMMessage.Notification(body: "Town Hall this Thursday"))
        #expect(
            message.jsonText
                == #"{"data":{"message":"Town Hall this Thursday","receiptId":"receipt-1"},"notification":{"body":"Town Hall this Thursday"}}"#
        )
    }

    /// A push decides for itself: `true` adds the block on a data platform, `false` leaves it out
    /// on a notifying one.
    @Test func thePushOverridesThePlatform() throws {
        let loud = try render(#"{"message":{"body":"hi","custom":{"android":{"notification":true}}},"target":{"platform":"android"}}"#)
        #expect(loud.notification == FCMMessage.Notification(body: "hi"))
        let quiet = try render(
            #"{"message":{"body":"hi","custom":{"android":{"notification":false}}},"target":{"platform":"android"}}"#,
            notificationByDefault: true)
        #expect(quiet.notification == nil)
    }

    @Test func customAndroidKeysBecomeStringDataValues() throws {
        let message = try render(
            #"""
            {"message":{"body":"hi","custom":{"android":{"story_url":"https://example.com/1","count":3,"ratio":0.5,"live":true,
              "story":{"id":7,"tags":["a","b"]},"list":[1,2],"gone":null}}},"target":{"platform":"android"}}
            """#)
        #expect(
            message.data == [
                "message": "hi", "receiptId": "receipt-1", "story_url": "https://example.com/1", "count": "3", "ratio": "0.5",
                "live": "true", "story": #"{"id":7,"tags":["a","b"]}"#, "list": "[1,2]",
            ])
    }

    /// The seed's example puts the text in `custom.android.message`: the custom block wins.
    @Test func customAndroidMessageWinsOverTheBody() throws {
        let message = try render(
            #"{"message":{"body":"general","custom":{"android":{"message":"for Android"}}},"target":{"platform":"android"}}"#,
            notificationByDefault: true)
        #expect(message.data["message"] == "for Android")
        #expect(message.notification?.body == "general")
    }

    @Test func collapseKeyPriorityAndExpiryBecomeAndroidOptions() throws {
        let expiry = now + 3_600_000
        let message = try render(
            #"""
            {"message":{"body":"hi","custom":{"android":{"collapse_key":"scores","priority":"HIGH"}}},
             "target":{"platform":"android"},"expiryTime":\#(expiry)}
            """#)
        #expect(message.android == FCMMessage.AndroidConfig(collapseKey: "scores", priority: .high, ttlSeconds: 3600))
        #expect(message.android.ttl == "3600s")
        #expect(message.data["collapse_key"] == nil && message.data["priority"] == nil)
        #expect(message.jsonText.contains(#""android":{"collapse_key":"scores","priority":"high","ttl":"3600s"}"#))

        // Fractions of a second are dropped; the past is 0s; beyond four weeks is four weeks.
        let soon = try render(#"{"message":{"body":"hi"},"target":{"platform":"android"},"expiryTime":\#(now + 1_999)}"#)
        #expect(soon.android.ttl == "1s")
        let past = try render(#"{"message":{"body":"hi"},"target":{"platform":"android"},"expiryTime":\#(now - 5_000)}"#)
        #expect(past.android.ttl == "0s")
        let far = try render(#"{"message":{"body":"hi"},"target":{"platform":"android"},"expiryTime":\#(now + 90 * 86_400_000)}"#)
        #expect(far.android.ttl == "2419200s")
    }

    @Test func notificationFalseSendsDataOnly() throws {
        let message = try render(
            #"{"message":{"body":"quiet","custom":{"android":{"notification":false}}},"target":{"platform":"android"}}"#,
            notificationByDefault: true)
        #expect(message.notification == nil)
        #expect(message.data == ["message": "quiet", "receiptId": "receipt-1"])
        #expect(!message.jsonText.contains("notification"))
    }

    @Test func aNotificationObjectSetsTitleImageAndAndroidDisplayKeys() throws {
        let message = try render(
            #"""
            {"message":{"body":"hi","custom":{"android":{"notification":{"title":"News","image":"https://example.com/i.png",
              "channel_id":"breaking","color":"#FF8800","sound":"default"}}}},"target":{"platform":"android"}}
            """#)
        #expect(message.notification == FCMMessage.Notification(title: "News", body: "hi", image: "https://example.com/i.png"))
        #expect(message.android.notification == ["channel_id": "breaking", "color": "#FF8800", "sound": "default"])
        #expect(message.data["notification"] == nil)
    }

    @Test func nothingForAndroidIsNil() throws {
        #expect(
            try FCMRenderer.render(
                push(#"{"message":{"custom":{"ios":{"badge":1}}},"target":{"platform":"all"}}"#), receiptID: nil, now: now) == nil)
    }

    @Test func receiptIDIsLeftOutWhenNil() throws {
        let message = try render(#"{"message":{"body":"hi"},"target":{"platform":"android"}}"#, receiptID: nil)
        #expect(message.data == ["message": "hi"])
    }

    @Test func refusesWhatFCMWouldRefuse() throws {
        let cases: [(String, String)] = [
            (#"{"from":"x"}"#, "message.custom.android.from"),
            (#"{"google.sent_time":"x"}"#, "message.custom.android.google.sent_time"),
            (#"{"gcm.n.e":"1"}"#, "message.custom.android.gcm.n.e"),
            (#"{"message_type":"x"}"#, "message.custom.android.message_type"),
            (#"{"receiptId":"mine"}"#, "message.custom.android.receiptId"),
            (#"{"priority":"urgent"}"#, "message.custom.android.priority"),
            (#"{"collapse_key":5}"#, "message.custom.android.collapse_key"),
            (#"{"notification":"yes"}"#, "message.custom.android.notification"),
            (#"{"notification":{"subtitle":"x"}}"#, "message.custom.android.notification.subtitle"),
            (#"{"notification":{"color":"orange"}}"#, "message.custom.android.notification.color"),
            (#"{"notification":{"title":1}}"#, "message.custom.android.notification.title"),
            (#"{"notification":false}"#, "message.custom.android"),
        ]
        for (android, field) in cases {
            let json = #"{"message":{"custom":{"android":\#(android)}},"target":{"platform":"android"}}"#
            let error = #expect(throws: ValidationError.self, "\(android)") { try FCMRenderer.render(push(json), receiptID: "r", now: now) }
            #expect(error?.field == field, "\(android)")
        }
    }

    @Test func aDataPayloadOverTheLimitSaysByHowMuch() throws {
        // "message" (7) + the body + "receiptId" (9) + the placeholder receipt (36).
        let fits = String(repeating: "x", count: 4096 - 7 - 9 - 36)
        let json = #"{"message":{"body":"\#(fits)"},"target":{"platform":"android"}}"#
        let message = try #require(try FCMRenderer.render(push(json), receiptID: FCMRenderer.receiptPlaceholder, now: now))
        #expect(message.dataPayloadBytes == 4096)

        let over = #"{"message":{"body":"\#(fits)","custom":{"android":{"k":"vv"}}},"target":{"platform":"android"}}"#
        let error = #expect(throws: ValidationError.self) {
            try FCMRenderer.render(push(over), receiptID: FCMRenderer.receiptPlaceholder, now: now)
        }
        #expect(error?.code == "payload_too_large")
        #expect(error?.message == "the FCM data payload (keys and values) would be 4099 bytes, 3 over Google's 4096-byte limit")
    }
}
