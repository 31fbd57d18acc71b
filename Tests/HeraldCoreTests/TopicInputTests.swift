import HeraldCore
import Testing

/// What `POST /v2/topics` and the batch endpoints accept.
@Suite struct TopicInputTests {
    let now: Int64 = 1_800_000_000_000

    @Test func namesAreLowerCasedAndExpiryComesFromEitherField() throws {
        #expect(try TopicInput(name: "Breaking").validated(now: now) == TopicRequest(name: "breaking", expiresAt: nil))
        #expect(try TopicInput(name: "a", timeToLive: 60).validated(now: now).expiresAt == now + 60_000)
        #expect(try TopicInput(name: "a", expireAt: now + 1).validated(now: now).expiresAt == now + 1)
    }

    @Test(arguments: [
        (TopicInput(), "name", "missing_field"),
        (TopicInput(name: ""), "name", "missing_field"),
        (TopicInput(name: String(repeating: "x", count: 256)), "name", "limit_exceeded"),
        (TopicInput(name: "a\u{0}b"), "name", "invalid_field"),
        (TopicInput(name: "a", expireAt: 1_800_000_060_000, timeToLive: 60), "timeToLive", "conflicting_fields"),
        (TopicInput(name: "a", timeToLive: 59), "timeToLive", "invalid_field"),
        (TopicInput(name: "a", timeToLive: -1), "timeToLive", "invalid_field"),
        (TopicInput(name: "a", timeToLive: Int64.max), "timeToLive", "invalid_field"),
        (TopicInput(name: "a", expireAt: 1_800_000_000_000), "expireAt", "in_the_past"),
        (TopicInput(name: "a", timeToLive: 3_153_600_001), "timeToLive", "invalid_field"),
    ])
    func badTopicsNameTheirField(_ input: TopicInput, _ field: String, _ code: String) {
        let error = #expect(throws: ValidationError.self) { try input.validated(now: now) }
        #expect(error?.field == field)
        #expect(error?.code == code)
    }

    @Test func aBatchNamesTheTopicAtFaultAndHoldsAtMost1024() {
        let error = #expect(throws: ValidationError.self) {
            try TopicBatchInput(topics: [TopicInput(name: "ok"), TopicInput(name: "b", timeToLive: 5)]).validated(now: now)
        }
        #expect(error?.field == "topics[1].timeToLive")
        #expect(throws: Never.self) {
            try TopicBatchInput(topics: Array(repeating: TopicInput(name: "x"), count: 1024)).validated(now: now)
        }
        let tooMany = #expect(throws: ValidationError.self) {
            try TopicBatchInput(topics: Array(repeating: TopicInput(name: "x"), count: 1025)).validated(now: now)
        }
        #expect(tooMany?.code == "limit_exceeded")
        #expect(tooMany?.field == "topics")
        let missing = #expect(throws: ValidationError.self) { try TopicBatchInput().validated(now: now) }
        #expect(missing?.field == "topics")
    }

    @Test func topicIDsAreDeduplicatedAndBounded() throws {
        #expect(try TopicIDsInput(topicIds: [3, 1, 3]).validated() == [3, 1])
        #expect(throws: ValidationError.self) { try TopicIDsInput(topicIds: Array(1...1025)).validated() }
        #expect(throws: ValidationError.self) { try TopicIDsInput().validated() }
    }
}
