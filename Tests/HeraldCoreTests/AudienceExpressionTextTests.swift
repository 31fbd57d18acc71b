import Foundation
import HeraldCore
import Testing

/// `AudienceExpression.compactText`: the one-line reading the dashboard shows.
@Suite struct AudienceExpressionTextTests {
    func parse(_ text: String) throws -> AudienceExpression {
        try AudienceExpression.parse(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), path: "target.audience")
    }

    @Test func theIssuesExampleReadsAsOneLine() throws {
        let expression = try parse(
            #"{"and":[{"topic":"news"},{"not":{"topic":"sports"}},{"or":[{"platform":"ios"},{"platform":"android"}]}]}"#)
        #expect(expression.compactText() == "topic:news and not topic:sports and (platform:ios or platform:android)")
    }

    @Test func nestedOperatorsAreParenthesizedAndALoneOperandIsItself() throws {
        #expect(try parse(#"{"topic":"news"}"#).compactText() == "topic:news")
        #expect(try parse(#"{"or":[{"topic":"a"}]}"#).compactText() == "topic:a")
        #expect(
            try parse(#"{"and":[{"or":[{"topic":"a"},{"topic":"b"}]},{"not":{"and":[{"os":"ios"},{"time_zone":"Europe/Paris"}]}}]}"#)
                .compactText() == "(topic:a or topic:b) and not (os:ios and time_zone:Europe/Paris)")
        #expect(
            try parse(#"{"or":[{"and":[{"topic":"a"},{"topic":"b"}]},{"custom_user_id":"u@example.com"}]}"#)
                .compactText() == "(topic:a and topic:b) or custom_user_id:u@example.com")
    }

    @Test func aValueThatIsNotAPlainWordIsAJSONString() throws {
        let expression = try parse(#"{"or":[{"custom_user_id":"a) or (b"},{"custom_user_id":"say \"hi\""},{"custom_user_id":"<b>"}]}"#)
        #expect(expression.compactText() == #"custom_user_id:"a) or (b" or custom_user_id:"say \"hi\"" or custom_user_id:"<b>""#)
    }

    @Test func aLongExpressionIsCutAtAWordAndSaysHowManyLeavesItHas() throws {
        let leaves = (0..<200).map { #"{"topic":"topic-\#($0)"}"# }.joined(separator: ",")
        let expression = try parse(#"{"or":[\#(leaves)]}"#)
        let text = expression.compactText(limit: 80)
        #expect(text.count <= 80)
        #expect(text.hasPrefix("topic:topic-0 or topic:topic-1 or "))
        #expect(text.hasSuffix(" … (200 leaves)"))
        #expect(expression.compactText().count > 80 && !expression.compactText().contains("…"))
    }
}
