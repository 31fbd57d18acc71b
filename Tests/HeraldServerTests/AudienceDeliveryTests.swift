import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

/// `target.audience` end to end: through `POST /v1/push` and the workers to the mock APNs,
/// through a schedule that fires later, `validate_only`'s count, and every refusal naming its
/// JSON path.
@Suite struct AudienceDeliveryTests {
    static let example = #"{"and":[{"topic":"news"},{"not":{"topic":"sports"}},{"or":[{"platform":"ios"},{"platform":"android"}]}]}"#

    @Test(arguments: Backend.available)
    func theIssuesExampleReachesEachMatchingDeviceOnceAndNoOther(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let news = try await world.register(tags: ["news"])
            let ann = try await world.register(tags: ["news", "weather"], customUserID: "ann")
            let sports = try await world.register(tags: ["news", "sports"])
            let none = try await world.register()
            // Another tenant's app with a device that matches every leaf.
            let stranger = try await Fixture.make(world.db.store)
            let strangerDevice = try await world.db.store.devices.register(
                on: stranger.platform,
                try RegistrationInput(registrationToken: randomAPNsToken(), tags: .replace(["news"])).validated(
                    for: .ios, requireToken: true))

            // validate_only: the count, nothing stored.
            let preview = try await client.execute(
                uri: "/v1/push", method: .post, headers: appAuth(world.fixture),
                body: body(#"{"message":{"body":"x"},"target":{"audience":\#(Self.example)},"validate_only":true}"#))
            #expect(preview.status == .ok)
            let answer = try preview.json()
            #expect(answer["valid"] as? Bool == true)
            #expect(answer["audience_count"] as? Int == 2)
            #expect(try await world.db.store.pushes.recent(applicationID: world.fixture.app.id, limit: 10).isEmpty)
            let theirs = try await client.execute(
                uri: "/v1/push", method: .post, headers: appAuth(stranger),
                body: body(#"{"message":{"body":"x"},"target":{"audience":\#(Self.example)},"validate_only":true}"#))
            #expect(try theirs.json()["audience_count"] as? Int == 1)

            let receipt = try await world.send(#"{"message":{"body":"example"},"target":{"audience":\#(Self.example)}}"#, client)
            let status = try await world.finished(receipt, client)
            #expect(status["targeted"] as? Int == 2)
            #expect(status["delivered"] as? Int == 2)
            var received = world.mock.received.map(\.deviceToken)
            for device in [news, ann] { #expect(received.filter { $0 == device.registrationToken }.count == 1) }
            for device in [sports, none, strangerDevice] { #expect(!received.contains(device.registrationToken)) }

            // With the other target fields: their intersection. The topics and custom user ids
            // are a union (ann twice over), the audience narrows it, each device gets one copy.
            let before = world.mock.received.count
            let both = try await world.send(
                #"{"message":{"body":"both"},"target":{"topics":["weather","news"],"custom_user_ids":["ann"],"audience":{"and":[{"custom_user_id":"ann"},{"os":"ios"}]}}}"#,
                client)
            let bothStatus = try await world.finished(both, client)
            #expect(bothStatus["targeted"] as? Int == 1)
            received = Array(world.mock.received.map(\.deviceToken).dropFirst(before))
            #expect(received == [ann.registrationToken])
        }
    }

    @Test(arguments: Backend.available)
    func aScheduledPushKeepsItsAudienceAndFiresWithIt(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            func register(_ tags: [String]) async throws -> Device {
                try await world.store.devices.register(
                    on: world.fixture.platform,
                    try RegistrationInput(registrationToken: randomAPNsToken(), tags: .replace(tags)).validated(
                        for: .ios, requireToken: true))
            }
            let reached = try await register(["news"])
            _ = try await register(["news", "sports"])
            _ = try await register([])
            let id = try await world.schedule(
                ScheduleHarness.push(#""scheduleIn":3600"#, target: #"{"audience":\#(Self.example)}"#), client)
            let shown = try await world.request(.get, "/v1/schedules/\(id)", client).json()
            let target = try #require((shown["push"] as? [String: Any])?["target"] as? [String: Any])
            #expect(target["audience"] != nil, "\(shown)")

            // A change to the audience is checked like a new push, and names the path.
            let bad = try await world.request(.put, "/v1/schedules/\(id)", json: #"{"target":{"audience":{"and":[]}}}"#, client)
            #expect(bad.status == .badRequest)
            #expect(try bad.error()["field"] as? String == "target.audience.and")

            world.clock.advance(3_600_000)
            let fired = try await world.store.schedules.fireDue(limit: 10)
            let pushID = try #require(fired.first?.pushID)
            let stored = try #require(try await world.store.pushes.find(id: pushID, applicationID: world.fixture.app.id))
            let push = try stored.accepted().push
            #expect(
                push.audienceExpression
                    == (try AudienceExpression.parse(
                        try JSONDecoder().decode(JSONValue.self, from: Data(Self.example.utf8)), path: "target.audience")))
            let page = try await world.store.pushes.audiencePage(of: push, applicationID: world.fixture.app.id, after: 0, limit: 100)
            #expect(page.deviceIDs == [reached.id])
        }
    }

    @Test(arguments: Backend.available)
    func everyFaultyAudienceIsRefusedNamingItsPath(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let leaves = (0...1000).map { #"{"topic":"t\#($0)"}"# }.joined(separator: ",")
            let deep = String(repeating: #"{"and":["#, count: 10) + #"{"topic":"a"}"# + String(repeating: "]}", count: 10)
            let cases: [(audience: String, field: String, code: String)] = [
                (#"{"and":[]}"#, "target.audience.and", "invalid_audience"),
                (#"{"and":[{"topic":"a"},{"or":[]}]}"#, "target.audience.and[1].or", "invalid_audience"),
                (#"{"xor":[{"topic":"a"}]}"#, "target.audience.xor", "invalid_audience"),
                (#"{"and":[{"topic":"a"},{"colour":"blue"}]}"#, "target.audience.and[1].colour", "invalid_audience"),
                (#"{"and":[{"topic":"a","os":"ios"}]}"#, "target.audience.and[0]", "invalid_audience"),
                (#"{"not":{"topic":"sports"}}"#, "target.audience.not", "invalid_audience"),
                (#"{"or":[\#(leaves)]}"#, "target.audience.or[1000].topic", "limit_exceeded"),
                (deep, "target.audience" + String(repeating: ".and[0]", count: 10), "limit_exceeded"),
                (#"{"or":[{"platform":"symbian"}]}"#, "target.audience.or[0].platform", "invalid_platform"),
                (#"{"or":[{"device":"nope"}]}"#, "target.audience.or[0].device", "invalid_field"),
                (#"{"or":[{"time_zone":"Mars/Olympus"}]}"#, "target.audience.or[0].time_zone", "invalid_field"),
                (#"{"or":[{"topic":7}]}"#, "target.audience.or[0].topic", "invalid_audience"),
                (#""news""#, "target.audience", "invalid_audience"),
            ]
            for (audience, field, code) in cases {
                let response = try await world.post(#"{"message":{"body":"x"},"target":{"audience":\#(audience)}}"#, client)
                #expect(response.status == .badRequest, "\(audience)")
                let error = try response.error()
                #expect(error["field"] as? String == field, "\(audience): \(error)")
                #expect(error["code"] as? String == code, "\(audience): \(error)")
            }
            #expect(try await world.pushCount() == 0)
        }
    }
}
