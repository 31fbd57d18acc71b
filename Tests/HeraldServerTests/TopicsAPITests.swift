import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// `/v2/topics`, `/v2/custom_user_ids` and `unmatched_topics` in push answers, on a router whose
/// store and handlers read the test's clock.
@Suite struct TopicsAPITests {
    /// Runs `body` against a router on a fresh database, both on `clock`.
    static func run(
        _ backend: Backend, clock: TestClock,
        _ body: @Sendable @escaping (TestDatabase, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let app = Application(router: buildRouter(store: db.store, clock: clock.epochClock), logger: TestDatabase.logger)
            try await app.test(.router) { client in
                try await body(db, client)
            }
        }
    }

    func post(_ client: any TestClientProtocol, _ uri: String, _ fixture: Fixture, _ json: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .post, headers: appAuth(fixture), body: body(json))
    }

    func get(_ client: any TestClientProtocol, _ uri: String, _ fixture: Fixture) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .get, headers: appAuth(fixture))
    }

    func registerDevice(_ db: TestDatabase, _ fixture: Fixture, tags: [String], customUserID: String? = nil) async throws -> Device {
        try await db.store.devices.register(
            on: fixture.platform,
            try RegistrationInput(
                registrationToken: randomAPNsToken(), customUserID: customUserID.map { .set($0) } ?? .unchanged, tags: .replace(tags)
            ).validated(for: .ios, requireToken: true))
    }

    @Test(arguments: Backend.available)
    func topicsAreCreatedListedAndDeleted(_ backend: Backend) async throws {
        let clock = TestClock()
        try await Self.run(backend, clock: clock) { db, client in
            let fixture = try await Fixture.make(db.store)
            let created = try await post(client, "/v2/topics/", fixture, #"{"name":"Flash-Sale","timeToLive":3600}"#)
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let topic = try created.json()
            let id = try #require(topic["id"] as? Int)
            #expect(topic["name"] as? String == "flash-sale")
            #expect((topic["expireAt"] as? NSNumber)?.int64Value == clock.now + 3_600_000)

            // Creating it again answers the existing topic, unchanged.
            let again = try await post(client, "/v2/topics", fixture, #"{"name":"flash-sale"}"#)
            #expect(again.status == .ok)
            #expect(try again.json()["id"] as? Int == id)
            #expect((try again.json()["expireAt"] as? NSNumber)?.int64Value == clock.now + 3_600_000)

            let forever = try await post(client, "/v2/topics", fixture, #"{"name":"news"}"#)
            #expect(try forever.json()["expireAt"] == nil)
            for name in ["n1", "n2", "n3"] {
                _ = try await post(client, "/v2/topics/", fixture, #"{"name":"\#(name)","expireAt":\#(clock.now + 120_000)}"#)
            }

            let page = try await get(client, "/v2/topics?size=2&page=2", fixture).json()
            #expect(page["totalTopics"] as? Int == 5)
            #expect(page["totalPages"] as? Int == 3)
            #expect(page["page"] as? Int == 2)
            #expect(page["size"] as? Int == 2)
            #expect((page["topics"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["n2", "n3"])
            let defaults = try await get(client, "/v2/topics/", fixture).json()
            #expect(defaults["size"] as? Int == 20)
            #expect(defaults["page"] as? Int == 1)
            #expect(defaults["totalPages"] as? Int == 1)
            let expiring = try await get(client, "/v2/topics?hasExpiry=true&q=N", fixture).json()
            #expect((expiring["topics"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["n1", "n2", "n3"])
            let never = try await get(client, "/v2/topics?hasExpiry=false", fixture).json()
            #expect((never["topics"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["news"])

            let deleted = try await client.execute(uri: "/v2/topics/\(id)", method: .delete, headers: appAuth(fixture))
            #expect(deleted.status == .noContent)
            #expect(try await get(client, "/v2/topics", fixture).json()["totalTopics"] as? Int == 4)
            let twice = try await client.execute(uri: "/v2/topics/\(id)", method: .delete, headers: appAuth(fixture))
            #expect(twice.status == .notFound)
            let nonsense = try await client.execute(uri: "/v2/topics/abc", method: .delete, headers: appAuth(fixture))
            #expect(nonsense.status == .notFound)
            // A deleted name can be created again, as a new topic.
            let recreated = try await post(client, "/v2/topics", fixture, #"{"name":"flash-sale"}"#)
            #expect(recreated.status == .created)
            #expect(try recreated.json()["id"] as? Int != id)
        }
    }

    @Test(arguments: Backend.available)
    func batchesCreateAndDeleteTopics(_ backend: Backend) async throws {
        let clock = TestClock()
        try await Self.run(backend, clock: clock) { db, client in
            let fixture = try await Fixture.make(db.store)
            _ = try await post(client, "/v2/topics", fixture, #"{"name":"old"}"#)
            let batch = try await post(
                client, "/v2/topics/batch/", fixture,
                #"{"topics":[{"name":"old"},{"name":"a","timeToLive":60},{"name":"b","expireAt":\#(clock.now + 5000)},{"name":"A"}],"returnTopics":true}"#
            )
            #expect(batch.status == .created, "\(String(buffer: batch.body))")
            let json = try batch.json()
            #expect(json["numTopicsCreated"] as? Int == 2)
            #expect(json["numTopicsExisted"] as? Int == 1)
            let topics = try #require(json["topics"] as? [[String: Any]])
            #expect(topics.compactMap { $0["name"] as? String } == ["old", "a", "b"])
            let ids = topics.compactMap { $0["id"] as? Int }

            let quiet = try await post(client, "/v2/topics/batch", fixture, #"{"topics":[{"name":"c"}]}"#)
            #expect(try quiet.json()["topics"] == nil)
            #expect(try quiet.json()["numTopicsCreated"] as? Int == 1)

            let removed = try await client.execute(
                uri: "/v2/topics/batch", method: .delete, headers: appAuth(fixture),
                body: body(#"{"topicIds":[\#(ids[1]),\#(ids[2]),\#(ids[2]),999999]}"#))
            #expect(removed.status == .ok)
            #expect(try removed.json()["numTopicsDeleted"] as? Int == 2)
            let left = try await get(client, "/v2/topics", fixture).json()
            #expect((left["topics"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["c", "old"])
        }
    }

    @Test(arguments: Backend.available)
    func badRequestsAre400sNamingTheField(_ backend: Backend) async throws {
        let clock = TestClock()
        try await Self.run(backend, clock: clock) { db, client in
            let fixture = try await Fixture.make(db.store)
            let tooMany = "[" + (0...1024).map { #"{"name":"t\#($0)"}"# }.joined(separator: ",") + "]"
            let posts: [(String, String, String)] = [
                ("/v2/topics", #"{"name":"x","expireAt":\#(clock.now + 120_000),"timeToLive":120}"#, "timeToLive"),
                ("/v2/topics", #"{"name":"x","timeToLive":59}"#, "timeToLive"),
                ("/v2/topics", #"{"name":"x","timeToLive":"long"}"#, "timeToLive"),
                ("/v2/topics", #"{}"#, "name"),
                ("/v2/topics/batch", #"{"topics":\#(tooMany)}"#, "topics"),
                ("/v2/topics/batch", #"{"topics":[{"name":"ok"},{"name":"x","timeToLive":1}]}"#, "topics[1].timeToLive"),
                ("/v2/topics/batch", #"{"topics":[],"returnTopics":"yes"}"#, "returnTopics"),
            ]
            for (uri, json, field) in posts {
                let response = try await post(client, uri, fixture, json)
                #expect(response.status == .badRequest, "\(json.prefix(60))")
                #expect(try response.error()["field"] as? String == field, "\(json.prefix(60))")
            }
            // A time already past is well formed but conflicts with the clock.
            let past = try await post(client, "/v2/topics", fixture, #"{"name":"x","expireAt":\#(clock.now - 1)}"#)
            #expect(past.status == .conflict)
            #expect(try past.error()["field"] as? String == "expireAt")
            for (query, field) in [("size=0", "size"), ("size=51", "size"), ("page=0", "page"), ("hasExpiry=maybe", "hasExpiry")] {
                let response = try await get(client, "/v2/topics?\(query)", fixture)
                #expect(response.status == .badRequest, "\(query)")
                #expect(try response.error()["field"] as? String == field)
            }
            let noIDs = try await client.execute(uri: "/v2/topics/batch", method: .delete, headers: appAuth(fixture), body: body("{}"))
            #expect(try noIDs.error()["field"] as? String == "topicIds")
            let badIDs = try await client.execute(
                uri: "/v2/topics/batch", method: .delete, headers: appAuth(fixture), body: body(#"{"topicIds":["one"]}"#))
            #expect(try badIDs.error()["field"] as? String == "topicIds[0]")
            #expect(try await get(client, "/v2/topics", fixture).json()["totalTopics"] as? Int == 0)

            // App credentials are required; platform credentials are not app credentials.
            let anonymous = try await client.execute(uri: "/v2/topics", method: .get)
            #expect(anonymous.status == .unauthorized)
            let device = try await client.execute(uri: "/v2/topics", method: .get, headers: basic(fixture))
            #expect(device.status == .unauthorized)
            let ids = try await client.execute(uri: "/v2/custom_user_ids", method: .get, headers: basic(fixture))
            #expect(ids.status == .unauthorized)
        }
    }

    /// One application's credentials never see, create into or delete another's topics.
    @Test(arguments: Backend.available)
    func applicationsAreIsolated(_ backend: Backend) async throws {
        let clock = TestClock()
        try await Self.run(backend, clock: clock) { db, client in
            let alice = try await Fixture.make(db.store)
            let bob = try await Fixture.make(db.store)
            let theirs = try await post(client, "/v2/topics", alice, #"{"name":"private"}"#)
            let id = try #require(try theirs.json()["id"] as? Int)
            _ = try await registerDevice(db, alice, tags: ["secret-club"], customUserID: "alice-user")

            #expect(try await get(client, "/v2/topics", bob).json()["totalTopics"] as? Int == 0)
            #expect(try await get(client, "/v2/custom_user_ids", bob).json()["custom_user_ids"] as? [String] == [])
            let delete = try await client.execute(uri: "/v2/topics/\(id)", method: .delete, headers: appAuth(bob))
            #expect(delete.status == .notFound)
            let batch = try await client.execute(
                uri: "/v2/topics/batch", method: .delete, headers: appAuth(bob), body: body(#"{"topicIds":[\#(id)]}"#))
            #expect(try batch.json()["numTopicsDeleted"] as? Int == 0)
            let own = try await post(client, "/v2/topics", bob, #"{"name":"private"}"#)
            #expect(own.status == .created)
            #expect(try own.json()["id"] as? Int != id)
            // Bob's push to Alice's topic reaches nothing.
            let push = try await post(client, "/v1/push", bob, #"{"message":{"body":"hi"},"target":{"topics":["secret-club"]}}"#)
            #expect(try push.json()["unmatched_topics"] as? [String] == ["secret-club"])

            let aliceTopics = try await get(client, "/v2/topics", alice).json()
            #expect((aliceTopics["topics"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["private", "secret-club"])
        }
    }

    /// An expired topic is not listed and cannot be targeted; the push answer names the topics
    /// that reach nobody, next to an unchanged receipt_id.
    @Test(arguments: Backend.available)
    func expiredTopicsAreGoneAndPushesSayWhatMatchedNothing(_ backend: Backend) async throws {
        let clock = TestClock()
        try await Self.run(backend, clock: clock) { db, client in
            let fixture = try await Fixture.make(db.store)
            _ = try await post(client, "/v2/topics", fixture, #"{"name":"sale","timeToLive":60}"#)
            _ = try await registerDevice(db, fixture, tags: ["sale", "news"])
            _ = try await post(client, "/v2/topics", fixture, #"{"name":"empty"}"#)

            let target = #"{"message":{"body":"hi"},"target":{"topics":["Sale","news","empty","unknown"]}}"#
            let before = try await post(client, "/v1/push", fixture, target)
            #expect(before.status == .ok)
            #expect(try before.json()["unmatched_topics"] as? [String] == ["empty", "unknown"])
            #expect(UUID(uuidString: try before.json()["receipt_id"] as? String ?? "") != nil)

            clock.advance(60_000)
            let listed = try await get(client, "/v2/topics", fixture).json()
            #expect((listed["topics"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["empty", "news"])
            let after = try await post(client, "/v1/push", fixture, target)
            #expect(try after.json()["unmatched_topics"] as? [String] == ["sale", "empty", "unknown"])
            #expect(try after.json()["receipt_id"] is String)

            // Pushes that do not target topics answer as before.
            let broadcast = try await post(client, "/v1/push", fixture, #"{"message":{"body":"hi"},"target":{"platform":"all"}}"#)
            #expect(try broadcast.json().keys.sorted() == ["receipt_id"])
        }
    }

    @Test(arguments: Backend.available)
    func customUserIDsAreListedAndSearched(_ backend: Backend) async throws {
        let clock = TestClock()
        try await Self.run(backend, clock: clock) { db, client in
            let fixture = try await Fixture.make(db.store)
            _ = try await registerDevice(db, fixture, tags: [], customUserID: "custom-user-id1")
            _ = try await registerDevice(db, fixture, tags: [], customUserID: "custom-user-id1")
            _ = try await registerDevice(db, fixture, tags: [], customUserID: "custom-user-id2")
            _ = try await registerDevice(db, fixture, tags: [])
            let all = try await get(client, "/v2/custom_user_ids", fixture)
            #expect(all.status == .ok)
            #expect(try all.json()["custom_user_ids"] as? [String] == ["custom-user-id1", "custom-user-id2"])
            let some = try await get(client, "/v2/custom_user_ids/?q=id1", fixture)
            #expect(try some.json()["custom_user_ids"] as? [String] == ["custom-user-id1"])
            let none = try await get(client, "/v2/custom_user_ids?q=ID1", fixture)
            #expect(try none.json()["custom_user_ids"] as? [String] == [])
        }
    }
}
