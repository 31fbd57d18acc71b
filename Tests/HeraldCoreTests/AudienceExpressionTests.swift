import Foundation
import HeraldCore
import Testing

@Suite struct AudienceExpressionTests {
    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    func parse(_ text: String) throws -> AudienceExpression {
        try AudienceExpression.parse(try json(text), path: "target.audience")
    }

    /// The error `text` is refused with.
    func refusal(_ text: String) throws -> ValidationError {
        do {
            _ = try parse(text)
        } catch let error as ValidationError {
            return error
        }
        Issue.record("accepted: \(text)")
        return ValidationError(message: "accepted")
    }

    @Test func readsTheIssuesExampleIntoATypedTree() throws {
        let expression = try parse(
            #"{"and":[{"topic":"News"},{"not":{"topic":"sports"}},{"or":[{"platform":"ios"},{"platform":"android"}]}]}"#)
        #expect(
            expression
                == .and([
                    .leaf(.topic("news")), .not(.leaf(.topic("sports"))),
                    .or([.leaf(.platformType(.ios)), .leaf(.platformType(.android))]),
                ]))
        #expect(expression.depth == 3)
        #expect(expression.leaves.count == 4)
    }

    @Test func readsEveryKindOfLeaf() throws {
        let platform = UUID()
        let device = UUID()
        let expression = try parse(
            """
            {"or":[{"platform":"\(platform.uuidString)"},{"device":"\(device.lowercasedString)"},{"custom_user_id":"User-1"},
             {"time_zone":"Europe/Paris"},{"os":"iOS"},{"platform":"webpush"}]}
            """)
        #expect(
            expression.leaves == [
                .platform(platform), .device(device), .customUserID("User-1"), .timeZone("Europe/Paris"), .os("ios"),
                .platformType(.web),
            ])
    }

    @Test func aLoneLeafIsAnAudience() throws {
        #expect(try parse(#"{"topic":"news"}"#) == .leaf(.topic("news")))
    }

    @Test func theJSONFormRoundTrips() throws {
        let text = #"{"and":[{"topic":"a"},{"not":{"or":[{"os":"android"},{"time_zone":"Asia/Tokyo"}]}}]}"#
        let expression = try parse(text)
        #expect(try AudienceExpression.parse(expression.json, path: "x") == expression)
        let encoded = try JSONEncoder().encode(expression)
        #expect(try JSONDecoder().decode(AudienceExpression.self, from: encoded) == expression)
    }

    // MARK: Refusals name the JSON path

    @Test func anEmptyAndOrOrIsRefusedAtItsPath() throws {
        #expect(try refusal(#"{"and":[]}"#).field == "target.audience.and")
        #expect(try refusal(#"{"and":[{"topic":"a"},{"or":[]}]}"#).field == "target.audience.and[1].or")
        #expect(try refusal(#"{"or":{"topic":"a"}}"#).field == "target.audience.or")
    }

    @Test func anUnknownMemberOrLeafIsRefusedAtItsPath() throws {
        let unknown = try refusal(#"{"and":[{"topic":"a"},{"colour":"blue"}]}"#)
        #expect(unknown.field == "target.audience.and[1].colour")
        #expect(unknown.code == "invalid_audience")
        #expect(try refusal(#"{"and":[{"topic":"a","os":"ios"}]}"#).field == "target.audience.and[0]")
        #expect(try refusal(#"{"and":[{}]}"#).field == "target.audience.and[0]")
        #expect(try refusal(#"["topic"]"#).field == "target.audience")
        #expect(try refusal(#"{"topic":7}"#).field == "target.audience.topic")
    }

    @Test func aNotAloneAtTheRootIsRefused() throws {
        #expect(try refusal(#"{"not":{"topic":"sports"}}"#).field == "target.audience.not")
        // Below the root it is what excludes.
        _ = try parse(#"{"and":[{"platform":"ios"},{"not":{"topic":"sports"}}]}"#)
    }

    @Test func leavesFollowTheirFieldsRules() throws {
        #expect(try refusal(#"{"or":[{"platform":"blackberry"}]}"#).field == "target.audience.or[0].platform")
        #expect(try refusal(#"{"or":[{"platform":"blackberry"}]}"#).code == "platform_retired")
        #expect(try refusal(#"{"or":[{"device":"not-a-uuid"}]}"#).field == "target.audience.or[0].device")
        #expect(try refusal(#"{"or":[{"time_zone":"Mars/Olympus"}]}"#).field == "target.audience.or[0].time_zone")
        #expect(try refusal(#"{"or":[{"topic":""}]}"#).field == "target.audience.or[0].topic")
        #expect(try refusal(#"{"or":[{"custom_user_id":""}]}"#).field == "target.audience.or[0].custom_user_id")
        let long = String(repeating: "x", count: Limits.customUserIDLength + 1)
        #expect(try refusal(#"{"or":[{"custom_user_id":"\#(long)"}]}"#).field == "target.audience.or[0].custom_user_id")
    }

    // MARK: Limits

    @Test func atMostAThousandLeaves() throws {
        func or(_ count: Int) -> String {
            "{\"or\":[" + (0..<count).map { "{\"topic\":\"t\($0)\"}" }.joined(separator: ",") + "]}"
        }
        #expect(try parse(or(Limits.audienceLeaves)).leaves.count == Limits.audienceLeaves)
        let refused = try refusal(or(Limits.audienceLeaves + 1))
        #expect(refused.code == "limit_exceeded")
        #expect(refused.field == "target.audience.or[\(Limits.audienceLeaves)].topic")
    }

    @Test func atMostTenLevels() throws {
        // `levels` nested `and`s around a leaf: levels + 1 deep.
        func nested(_ levels: Int) -> String {
            String(repeating: "{\"and\":[", count: levels) + "{\"topic\":\"a\"}" + String(repeating: "]}", count: levels)
        }
        #expect(try parse(nested(Limits.audienceDepth - 1)).depth == Limits.audienceDepth)
        let refused = try refusal(nested(Limits.audienceDepth))
        #expect(refused.code == "limit_exceeded")
        #expect(refused.field?.hasPrefix("target.audience.and[0]") == true)
    }
}
