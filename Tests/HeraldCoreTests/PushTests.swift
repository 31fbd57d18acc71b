import Foundation
import HeraldCore
import Testing

@Suite struct PushValidationTests {
    let now: Int64 = 1_800_000_000_000

    func push(_ json: String) throws -> PushInput {
        try JSONDecoder().decode(PushInput.self, from: Data(json.utf8))
    }

    @Test func readsTheSeedsCompleteExample() throws {
        let input = try push(
            #"""
            {"message":{"custom":{"ios":{"alert":{"body":"Breaking News"},"content-available":true,
              "extra":{"story_url":"https://my_server/article/123456789"}},
              "android":{"message":"Breaking News","story_url":"https://my_server/article/123456789"}}},
             "target":{"topics":["breaking_news","Local","dairy"],"platforms":["ios","android"]},"scheduleIn":7200}
            """#)
        let validated = try input.validated(now: now)
        #expect(validated.scheduledAt == now + 7_200_000)
        #expect(
            validated.audience
                == .selection(
                    platforms: [.ios, .android], topics: ["breaking_news", "local", "dairy"], customUserIDs: [], interactiveOnly: false))
    }

    /// The seed's complete example carries a `windowsPhone` block beside `windows8`: WNS
    /// reaches Windows Phone 8.1 apps too, so the block is kept for `WNSRenderer`.
    @Test func keepsAWindowsPhoneBlockForWNS() throws {
        let validated = try push(
            #"""
            {"message":{"body":"x","custom":{"windowsPhone":{"template":"toast","template_fields":{"subtitle":"s"}}}},
             "target":{"platforms":["windows8"]}}
            """#
        ).validated(now: now)
        #expect(validated.custom["windowsPhone"]?.objectValue?["template"] == .string("toast"))
    }

    @Test func devicesOverrideEveryOtherTarget() throws {
        let id = UUID()
        let validated = try push(
            #"""
            {"message":{"body":"hi"},"target":{"devices":["\#(id.uuidString)","\#(id.uuidString.lowercased())"],"topics":["x"],"platform":"all"}}
            """#
        ).validated(now: now)
        #expect(validated.audience == .devices([id]))
    }

    @Test func theDeprecatedPlatformJoinsPlatforms() throws {
        let validated = try push(#"{"message":{"body":"hi"},"target":{"platforms":["ios"],"platform":"android"}}"#).validated(now: now)
        #expect(validated.audience == .selection(platforms: [.ios, .android], topics: [], customUserIDs: [], interactiveOnly: false))
        let all = try push(#"{"message":{"body":"hi"},"target":{"platform":"all"}}"#).validated(now: now)
        #expect(all.audience == .selection(platforms: Set(PlatformType.allCases), topics: [], customUserIDs: [], interactiveOnly: false))
    }

    @Test func refusesWhatTheAPIRefuses() throws {
        let many = (0...Limits.pushDevices).map { _ in "\"\(UUID().uuidString)\"" }.joined(separator: ",")
        let manyTopics = (0...Limits.pushTopics).map { "\"t\($0)\"" }.joined(separator: ",")
        let manyUsers = (0...Limits.pushCustomUserIDs).map { "\"u\($0)\"" }.joined(separator: ",")
        let cases: [(String, String)] = [
            (#"{"target":{"platform":"all"}}"#, "message"),
            (#"{"message":{"body":"x"}}"#, "target"),
            (#"{"message":{"body":"x"},"target":{}}"#, "target"),
            (#"{"message":{"body":"x"},"target":{"devices":["nope"]}}"#, "target.devices[0]"),
            (#"{"message":{"body":"x"},"target":{"devices":[\#(many)]}}"#, "target.devices"),
            (#"{"message":{"body":"x"},"target":{"topics":[\#(manyTopics)]}}"#, "target.topics"),
            (#"{"message":{"body":"x"},"target":{"custom_user_ids":[\#(manyUsers)]}}"#, "target.custom_user_ids"),
            (#"{"message":{"body":"x"},"target":{"platforms":["ios","symbian"]}}"#, "target.platforms[1]"),
            (#"{"message":{"body":"x"},"target":{"platform":"bb10"}}"#, "target.platform"),
            (#"{"message":{"body":"x"},"target":{"platform":"all"},"scheduleAt":1,"scheduleIn":2}"#, "scheduleIn"),
            (#"{"message":{"body":"x","custom":{"ios":"text"}},"target":{"platform":"all"}}"#, "message.custom.ios"),
            (#"{"message":{"body":"x","custom":{"windowsPhone":"text"}},"target":{"platform":"all"}}"#, "message.custom.windowsPhone"),
            (#"{"message":{"body":"x","custom":{"bb10":"text"}},"target":{"platform":"all"}}"#, "message.custom.bb10"),
            // With both, one block would be silently ignored.
            (#"{"message":{"body":"x","custom":{"windows":{},"windows8":{}}},"target":{"platform":"all"}}"#, "message.custom.windows"),
        ]
        for (json, field) in cases {
            let error = #expect(throws: ValidationError.self, "\(json.prefix(60))") { try push(json).validated(now: now) }
            #expect(error?.field == field, "\(json.prefix(60))")
        }
    }
}

@Suite struct APNsRendererTests {
    func render(_ json: String, receipt: String? = "r-1") throws -> APNsNotification? {
        let push = try JSONDecoder().decode(PushInput.self, from: Data(json.utf8)).validated(now: 0)
        return try APNsRenderer.render(push, receiptID: receipt)
    }

    func payload(_ notification: APNsNotification?) throws -> [String: Any] {
        let data = Data(try #require(notification).payload)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theBodyBecomesTheAlertWithTheReceipt() throws {
        let notification = try render(#"{"message":{"body":"Town Hall"},"target":{"platform":"ios"},"expiryTime":1459468800000}"#)
        let json = try payload(notification)
        #expect((json["aps"] as? [String: Any])?["alert"] as? String == "Town Hall")
        #expect(json["receiptId"] as? String == "r-1")
        #expect(notification?.pushType == .alert)
        #expect(notification?.priority == 10)
        #expect(notification?.expiration == 1_459_468_800)
    }

    @Test func customIOSFieldsRenderAsApplesKeys() throws {
        let notification = try render(
            #"""
            {"message":{"body":"fallback","custom":{"ios":{"alert":{"title":"Mail","loc-args":["a"]},"subtitle":"From Bakery",
             "badge":1,"sound":"new_email","category":"new_email","thread-id":"inbox","mutable-content":true,
             "interruption-level":"time-sensitive","relevance-score":0.5,"collapse-id":"mail-1",
             "extra":{"from":"Bakery","nested":{"n":2}}}}},"target":{"platform":"ios"}}
            """#)
        let json = try payload(notification)
        let aps = try #require(json["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "Mail")
        #expect(alert["subtitle"] as? String == "From Bakery")
        #expect(alert["body"] as? String == "fallback")
        #expect(aps["badge"] as? Int == 1)
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(aps["interruption-level"] as? String == "time-sensitive")
        #expect(aps["relevance-score"] as? Double == 0.5)
        #expect(json["from"] as? String == "Bakery")
        #expect((json["nested"] as? [String: Any])?["n"] as? Int == 2)
        #expect(notification?.collapseID == "mail-1")
    }

    @Test func contentAvailableAloneIsABackgroundPushAtPriorityFive() throws {
        let notification = try render(
            #"{"message":{"custom":{"ios":{"content-available":true,"extra":{"k":"v"}}}},"target":{"platform":"ios"}}"#)
        let aps = try #require(try payload(notification)["aps"] as? [String: Any])
        #expect(aps["content-available"] as? Int == 1)
        #expect(aps["alert"] == nil)
        #expect(notification?.pushType == .background)
        #expect(notification?.priority == 5)
    }

    @Test func aPushWithNothingForIOSRendersNothing() throws {
        #expect(try render(#"{"message":{"custom":{"android":{"message":"x"}}},"target":{"platform":"all"}}"#) == nil)
        #expect(try payload(try render(#"{"message":{"body":"x"},"target":{"platform":"all"}}"#, receipt: nil))["receiptId"] == nil)
    }

    @Test func namesTheFieldOfABadIOSBlock() throws {
        let cases: [(String, String)] = [
            (#"{"badge":"one"}"#, "message.custom.ios.badge"),
            (#"{"badge":-1}"#, "message.custom.ios.badge"),
            (#"{"alert":5}"#, "message.custom.ios.alert"),
            (#"{"alert":{"colour":"red"}}"#, "message.custom.ios.alert.colour"),
            (#"{"alert":{"loc-args":[1]}}"#, "message.custom.ios.alert.loc-args"),
            (#"{"interruption-level":"loud"}"#, "message.custom.ios.interruption-level"),
            (#"{"relevance-score":2}"#, "message.custom.ios.relevance-score"),
            (#"{"extra":{"aps":{}}}"#, "message.custom.ios.extra.aps"),
            (#"{"extra":[]}"#, "message.custom.ios.extra"),
            (#"{"content-available":"yes"}"#, "message.custom.ios.content-available"),
            (#"{"collapse-id":"\#(String(repeating: "c", count: 65))"}"#, "message.custom.ios.collapse-id"),
            (#"{"collapse-id":"mail\r\n1"}"#, "message.custom.ios.collapse-id"),
            (#"{"collapse-id":" mail-1"}"#, "message.custom.ios.collapse-id"),
            (#"{"extra":{"k":"v"}}"#, "message.custom.ios"),
        ]
        for (ios, field) in cases {
            let error = #expect(throws: ValidationError.self, "\(ios)") {
                try render(#"{"message":{"custom":{"ios":\#(ios)}},"target":{"platform":"ios"}}"#)
            }
            #expect(error?.field == field, "\(ios)")
        }
    }

    @Test func saysByHowMuchAPayloadIsOverTheLimit() throws {
        let big = String(repeating: "x", count: 4100)
        let error = #expect(throws: ValidationError.self) {
            try render(#"{"message":{"body":"\#(big)"},"target":{"platform":"ios"}}"#)
        }
        #expect(error?.code == "payload_too_large")
        #expect(error?.message.contains("over Apple's 4096-byte limit") == true)
        let fits = String(repeating: "x", count: 4000)
        #expect(
            try render(#"{"message":{"body":"\#(fits)"},"target":{"platform":"ios"}}"#, receipt: APNsRenderer.receiptPlaceholder) != nil)
    }
}
