import Foundation
import HeraldCore
import Testing

/// The stored form of a push: one validation at acceptance, a versioned text the workers only
/// decode, and the older request-only rows read as they were accepted.
@Suite struct AcceptedPushTests {
    let now: Int64 = 1_800_000_000_000

    func input(_ json: String) throws -> PushInput {
        try JSONDecoder().decode(PushInput.self, from: Data(json.utf8))
    }

    func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func everyKindOfPushComesBackAsStored() throws {
        let pushes = [
            #"{"message":{"body":"hi"},"target":{"devices":["0b5d1c1e-6a52-4b55-9a43-6a4f3f43a6a1","0B5D1C1E-6A52-4B55-9A43-6A4F3F43A6A2"]}}"#,
            #"{"message":{"body":"hi","custom":{"ios":{"badge":2,"extra":{"n":1.5,"list":[1,"a",null,true]}},"android":{"k":"v"}}},"target":{"topics":["News"],"platforms":["ios","android"],"custom_user_ids":["b","a"],"interactive-only":true},"expiryTime":1900000000000,"scheduleIn":60}"#,
            #"{"message":{"body":"everyone"},"target":{"platform":"all"},"rate":{"per_second":50}}"#,
            #"{"message":{"custom":{"web":{"title":"t"}}},"target":{"custom_user_ids":["ann"]},"scheduleLocal":"2027-01-15T09:00"}"#,
        ]
        for json in pushes {
            let push = try AcceptedPush.check(try input(json), now: now)
            for request in [nil, try JSONDecoder().decode([String: JSONValue].self, from: Data(json.utf8))] {
                let accepted = AcceptedPush(push, request: request)
                let read = try AcceptedPush(stored: accepted.storedText, acceptedAt: 0)
                #expect(read == accepted, "\(json)")
                #expect(try AcceptedPush.request(stored: accepted.storedText) == request)
            }
        }
    }

    @Test func theStoredTextSaysItsVersionAndIsTheSameForTheSamePush() throws {
        let json = #"{"message":{"body":"hi"},"target":{"platforms":["web","ios","android"],"topics":["b","a"]}}"#
        let accepted = AcceptedPush(try AcceptedPush.check(try input(json), now: now))
        #expect(accepted.version == AcceptedPush.currentVersion)
        #expect(try object(accepted.storedText)["version"] as? Int == 1)
        let again = AcceptedPush(try AcceptedPush.check(try input(json), now: now))
        #expect(again.storedText == accepted.storedText)
        // A validate-only flag is not kept: such a push is never stored.
        let checked = try AcceptedPush.check(
            try input(#"{"message":{"body":"x"},"target":{"platform":"ios"},"validate_only":true}"#), now: now)
        #expect(checked.validateOnly)
        #expect(try AcceptedPush(stored: AcceptedPush(checked).storedText, acceptedAt: 0).push.validateOnly == false)
    }

    @Test func aVersion0RowIsCheckedAsWhenItWasAccepted() throws {
        let text = #"{"message":{"body":"old"},"target":{"platform":"ios","topics":["Sport"]},"scheduleIn":30}"#
        let read = try AcceptedPush(stored: text, acceptedAt: now)
        #expect(read == AcceptedPush(try AcceptedPush.check(try input(text), now: now), request: read.request))
        #expect(read.push.scheduledAt == now + 30_000)
        #expect(read.push.audience == .selection(platforms: [.ios], topics: ["sport"], customUserIDs: [], interactiveOnly: false))
        // The request is kept: a schedule shows it, and a change starts from it.
        #expect(read.request?["scheduleIn"] == .int(30))
        #expect(try AcceptedPush.request(stored: text)?["message"] == .object(["body": .string("old")]))
    }

    @Test func aVersion0RowTodaysRulesRefuseNamesItsField() throws {
        let text = #"{"message":{"custom":{"ios":{"badge":"many"}}},"target":{"platform":"ios"}}"#
        let error = #expect(throws: StoredPushError.self) { try AcceptedPush(stored: text, acceptedAt: now) }
        #expect(error?.validationError?.field == "message.custom.ios.badge")
        // Shown without a check, as a schedule's request.
        #expect(try AcceptedPush.request(stored: text)?["target"] == .object(["platform": .string("ios")]))
    }

    @Test func aRowOfANewerVersionOrNotJSONIsRefused() throws {
        let newer = #"{"version":2,"push":{"audience":{"topics":[]}}}"#
        let error = #expect(throws: StoredPushError.self) { try AcceptedPush(stored: newer, acceptedAt: now) }
        #expect(error?.validationError == nil)
        #expect(error?.description.contains("version 2") == true)
        #expect(throws: StoredPushError.self) { try AcceptedPush(stored: "not json", acceptedAt: now) }
        #expect(throws: StoredPushError.self) { try AcceptedPush.request(stored: "[1]") }
    }

    @Test func theAcceptanceCheckRefusesWhatAProviderWouldNamingTheField() throws {
        let refused: [(String, String)] = [
            (#"{"message":{"custom":{"ios":{"badge":-1}}},"target":{"platform":"ios"}}"#, "message.custom.ios.badge"),
            (
                #"{"message":{"custom":{"android":{"priority":"urgent"}}},"target":{"platform":"android"}}"#,
                "message.custom.android.priority"
            ),
            (#"{"message":{"custom":{"web":{"urgency":"now"}}},"target":{"platform":"web"}}"#, "message.custom.web.urgency"),
            (#"{"message":{"body":"x"},"target":{"devices":["nope"]}}"#, "target.devices[0]"),
        ]
        for (json, field) in refused {
            let error = #expect(throws: ValidationError.self, "\(json)") { try AcceptedPush.check(try input(json), now: now) }
            #expect(error?.field == field, "\(json)")
        }
    }

    @Test func localTimesAndAudiencesHaveStableStoredShapes() throws {
        let topical = AcceptedPush(
            try AcceptedPush.check(
                try input(#"{"message":{"body":"x"},"target":{"topics":["a"]},"scheduleLocal":"2027-01-15T09:00"}"#), now: now))
        let push = try #require(try object(topical.storedText)["push"] as? [String: Any])
        #expect(push["local_time"] as? String == "2027-01-15T09:00:00")
        let audience = try #require(push["audience"] as? [String: Any])
        #expect(audience["platforms"] == nil)  // no platforms named: every platform
        #expect(audience["topics"] as? [String] == ["a"])
        #expect(throws: StoredPushError.self) {
            try AcceptedPush(stored: #"{"version":1,"push":{"audience":{},"local_time":"soon"}}"#, acceptedAt: 0)
        }
    }
}
