import Foundation
import HeraldCore
import Testing

/// A push's `custom.ios.badge` read once, typed, kept in the stored push, and rendered per number.
@Suite struct AutobadgePushTests {
    func push(_ badge: String) throws -> Push {
        let json = #"{"message":{"body":"hi","custom":{"ios":{"badge":\#(badge)}}},"target":{"platform":"ios"}}"#
        return try AcceptedPush.check(try JSONDecoder().decode(PushInput.self, from: Data(json.utf8)), now: 0)
    }

    func badge(_ notification: APNsNotification?) throws -> Int? {
        let payload = try #require(notification).payload
        let json = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        return (json["aps"] as? [String: Any])?["badge"] as? Int
    }

    @Test func theBadgeIsReadWhenThePushIsAccepted() throws {
        #expect(try push("4").badge == .set(4))
        #expect(try push(#""+3""#).badge == .add(3))
        #expect(try push(#""auto""#).badgeDelta == 1)
        #expect(try push("null").badge == nil)
        #expect(try push("4").badgeDelta == nil)
        #expect(throws: ValidationError.self) { try push(#""+x""#) }
    }

    @Test func aRelativeBadgeShowsTheDevicesNumber() throws {
        let relative = try push(#""-2""#)
        #expect(try badge(APNsRenderer.render(relative, receiptID: nil, badge: 7)) == 7)
        // Checked at acceptance with the largest number, the longest payload it can have.
        #expect(try badge(APNsRenderer.render(relative, receiptID: nil)) == Int(BadgeChange.limit))
        #expect(try badge(APNsRenderer.render(try push("4"), receiptID: nil)) == 4)
    }

    @Test func theStoredPushKeepsTheChangeTyped() throws {
        for text in ["4", #""+3""#, #""-1""#, #""auto""#] {
            let accepted = AcceptedPush(try push(text))
            let read = try AcceptedPush(stored: accepted.storedText, acceptedAt: 0)
            #expect(read == accepted, "\(text)")
        }
        #expect(AcceptedPush(try push(#""auto""#)).storedText.contains(#""badge":"+1""#))
        // A push stored before the change was kept typed (version 1 without `badge`) had a number.
        let older =
            #"{"version":1,"push":{"audience":{"platforms":["ios"],"topics":[],"custom_user_ids":[],"interactive_only":false},"custom":{"ios":{"badge":3}}}}"#
        #expect(try AcceptedPush(stored: older, acceptedAt: 0).push.badge == .set(3))
    }
}
