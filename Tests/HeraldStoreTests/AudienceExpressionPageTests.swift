import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldStore

/// `target.audience` evaluated by the store while it pages: every expression and every
/// combination with the other target fields gives, page after page, exactly the devices a
/// plain evaluation over the same devices gives, each once, and the count agrees; another
/// app's devices never appear.
@Suite struct AudienceExpressionPageTests {
    /// One test device, as inserted and as the oracle sees it.
    struct Seeded {
        var id: Int64 = 0
        var uuid: UUID
        var platformID: UUID
        var type: PlatformType
        var os: String
        var tags: Set<String>
        var customUserID: String?
        var timeZone: String?
        var active: Bool
    }

    /// The oracle: the expression evaluated over one device in memory (tests only).
    static func holds(_ expression: AudienceExpression, for device: Seeded, live: Set<String>) -> Bool {
        switch expression {
        case .and(let operands): return operands.allSatisfy { holds($0, for: device, live: live) }
        case .or(let operands): return operands.contains { holds($0, for: device, live: live) }
        case .not(let operand): return !holds(operand, for: device, live: live)
        case .leaf(let leaf):
            switch leaf {
            case .topic(let name): return live.contains(name) && device.tags.contains(name)
            case .platformType(let type): return device.type == type
            case .platform(let id): return device.platformID == id
            case .customUserID(let id): return device.customUserID == id
            case .device(let id): return device.uuid == id
            case .timeZone(let zone): return device.timeZone == zone
            case .os(let os): return device.os.lowercased() == os
            }
        }
    }

    static func insert(_ device: inout Seeded, app: UUID, into db: TestDatabase) async throws {
        let row = try await db.database.query(
            """
            INSERT INTO devices (uuid, app_id, platform_id, platform_type, token, os, custom_user_id, time_zone, active, created_at, updated_at)
            VALUES (\(device.uuid), \(app), \(device.platformID), \(device.type.rawValue), \(device.uuid.lowercasedString), \(device.os),
                \(device.customUserID), \(device.timeZone), \(device.active ? 1 : 0), 0, 0)
            RETURNING id
            """)
        device.id = try #require(row.first).int("id")
        for tag in device.tags.sorted() {
            try await db.database.query("INSERT INTO device_tags (device_id, app_id, tag) VALUES (\(device.id), \(app), \(tag))")
        }
    }

    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test(arguments: Backend.available)
    func pagesAndCountsMatchThePlainEvaluation(_ backend: Backend) async throws {
        try await withTestDatabase(backend) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let app = fixture.app.id
            let (android, _) = try await db.store.platforms.create(
                applicationID: app, name: "android", type: .android, credentials: try Fixture.credentials(for: .android))
            let other = try await Fixture.make(db.store)
            for (owner, name, expires) in [(app, "news", nil), (app, "sports", nil), (app, "old", Int64(1)), (other.app.id, "news", nil)] {
                try await db.database.query(
                    "INSERT INTO topics (app_id, name, created_at, expires_at) VALUES (\(owner), \(name), 0, \(expires as Int64?))")
            }
            let live: Set<String> = ["news", "sports"]

            var devices: [Seeded] = []
            for i in 0..<60 {
                let isAndroid = i % 3 == 0
                var tags = Set<String>()
                if i % 2 == 0 { tags.insert("news") }
                if i % 5 == 0 { tags.insert("sports") }
                if i % 7 == 0 { tags.insert("old") }
                var device = Seeded(
                    uuid: UUID(), platformID: isAndroid ? android.id : fixture.platform.id, type: isAndroid ? .android : .ios,
                    os: isAndroid ? "Android" : "iOS", tags: tags, customUserID: i % 4 == 0 ? "user\(i % 8)" : nil,
                    timeZone: [nil, "Europe/Paris", "Asia/Tokyo"][i % 3], active: i != 58)
                try await Self.insert(&device, app: app, into: db)
                devices.append(device)
            }
            // Another app's devices match every leaf but their app.
            for _ in 0..<10 {
                var stranger = Seeded(
                    uuid: UUID(), platformID: other.platform.id, type: .ios, os: "ios", tags: ["news"], customUserID: "user0",
                    timeZone: "Europe/Paris", active: true)
                try await Self.insert(&stranger, app: other.app.id, into: db)
            }

            let seeded = devices
            let third = devices[3].uuid.lowercasedString
            let expressions = [
                #"{"and":[{"topic":"news"},{"not":{"topic":"sports"}},{"or":[{"platform":"ios"},{"platform":"android"}]}]}"#,
                #"{"or":[{"custom_user_id":"user0"},{"time_zone":"Europe/Paris"}]}"#,
                #"{"and":[{"os":"android"},{"not":{"time_zone":"Asia/Tokyo"}}]}"#,
                #"{"and":[{"platform":"\#(android.id.lowercasedString)"},{"not":{"custom_user_id":"user0"}}]}"#,
                #"{"or":[{"topic":"old"},{"device":"\#(third)"}]}"#,
                #"{"topic":"sports"}"#,
                #"{"and":[{"topic":"sports"},{"not":{"and":[{"platform":"ios"},{"topic":"news"}]}}]}"#,
                #"{"and":[{"topic":"unknown"},{"os":"ios"}]}"#,
            ]
            let targets: [(PushInput.Target, (Seeded) -> Bool)] = [
                (PushInput.Target(), { _ in true }),
                (PushInput.Target(topics: ["sports"]), { $0.tags.contains("sports") }),
                (PushInput.Target(topics: ["news"], customUserIDs: ["user4"]), { $0.tags.contains("news") || $0.customUserID == "user4" }),
                (PushInput.Target(customUserIDs: ["user0", "user4"]), { ["user0", "user4"].contains($0.customUserID) }),
                (PushInput.Target(platforms: ["android"]), { $0.type == .android }),
                (
                    PushInput.Target(devices: seeded.prefix(20).map(\.uuid.uuidString)),
                    { d in seeded.prefix(20).contains { $0.id == d.id } }
                ),
            ]
            for text in expressions {
                for (base, selects) in targets {
                    var target = base
                    target.audience = try json(text)
                    let push = try PushInput(message: .init(body: "x"), target: target).validated(now: 0)
                    let expression = try #require(push.audienceExpression)
                    let expected = devices.filter { $0.active && selects($0) && Self.holds(expression, for: $0, live: live) }.map(\.id)

                    var reached: [Int64] = []
                    var cursor: Int64 = 0
                    for _ in 0..<100 {
                        let page = try await db.store.pushes.audiencePage(of: push, applicationID: app, after: cursor, limit: 7)
                        reached += page.deviceIDs
                        cursor = page.cursor
                        if page.exhausted { break }
                    }
                    #expect(reached == expected, "\(text) with \(base)")
                    #expect(Set(reached).count == reached.count)
                    #expect(try await db.store.pushes.audienceCount(of: push, applicationID: app) == expected.count, "\(text) with \(base)")
                }
            }
        }
    }

    /// Every value is bound, never written into the statement; an expired topic matches nothing.
    @Test func valuesAreBoundAndDeadTopicsMatchNothing() throws {
        let push = try PushInput(
            message: .init(body: "x"),
            target: .init(audience: try json(#"{"and":[{"topic":"news"},{"not":{"os":"android"}}]}"#))
        ).validated(now: 0)
        let condition = AudienceCondition(try #require(push.audienceExpression), liveTopics: ["news"])
        #expect(condition.sql.binds == [.text("news"), .text("android")])
        #expect(!condition.sql.text(for: .postgres).contains("news"))
        // An expired topic matches nothing.
        let expired = AudienceCondition(try #require(push.audienceExpression), liveTopics: [])
        #expect(expired.sql.text(for: .sqlite).contains("1 = 0"))
    }
}
