import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The API's router on a fresh database whose clock the test moves: an app with an iOS
/// platform, and a second app (for isolation), with a root admin token.
struct ScheduleHarness: Sendable {
    let db: TestDatabase
    let clock: TestClock
    let fixture: Fixture
    let other: Fixture
    let adminToken: String

    var store: Store { db.store }

    static func run(
        _ backend: Backend, sendImmediatelyWithin: Duration = .seconds(60),
        _ body: @Sendable @escaping (ScheduleHarness, any TestClientProtocol) async throws -> Void
    ) async throws {
        let clock = TestClock()
        try await withTestDatabase(backend, clock: clock.epochClock) { db async throws in
            let fixture = try await Fixture.make(db.store)
            let other = try await Fixture.make(db.store)
            let (_, token) = try await db.store.adminTokens.create(tenantID: nil, name: "root")
            let harness = ScheduleHarness(db: db, clock: clock, fixture: fixture, other: other, adminToken: token)
            let router = buildRouter(
                store: db.store, clock: clock.epochClock, scheduling: SchedulingConfiguration(sendImmediatelyWithin: sendImmediatelyWithin))
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: TestDatabase.logger)
            try await app.test(.router) { client in
                try await body(harness, client)
            }
        }
    }

    /// `POST /v1/push` as `fixture`'s app; the answer's JSON (status checked by the caller).
    func post(_ json: String, as app: Fixture? = nil, _ client: any TestClientProtocol) async throws -> TestResponse {
        try await client.execute(uri: "/v1/push", method: .post, headers: appAuth(app ?? fixture), body: body(json))
    }

    /// Schedules `json` and returns its `schedule_id`.
    func schedule(_ json: String, _ client: any TestClientProtocol) async throws -> String {
        let response = try await post(json, client)
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        let answer = try response.json()
        #expect(answer["receipt_id"] == nil)
        return try #require(answer["schedule_id"] as? String)
    }

    func request(
        _ method: HTTPRequest.Method, _ path: String, as app: Fixture? = nil, json: String? = nil, _ client: any TestClientProtocol
    ) async throws -> TestResponse {
        try await client.execute(uri: path, method: method, headers: appAuth(app ?? fixture), body: json.map(body))
    }

    /// A push body to `target` with `timing` (JSON members, without braces).
    static func push(_ timing: String, body text: String = "Hello", target: String = #"{"platform":"all"}"#) -> String {
        #"{"message":{"body":"\#(text)"},"target":\#(target)\#(timing.isEmpty ? "" : "," + timing)}"#
    }

    /// Pushes stored for `fixture`'s app.
    func pushCount(_ app: Fixture? = nil) async throws -> Int64 {
        try await db.database.query("SELECT COUNT(*) AS n FROM pushes WHERE app_id = \((app ?? fixture).app.id)").first?.int("n") ?? 0
    }

    /// `schedulers` tasks each calling `fireDue(limit:)` until nothing is due: every slot and
    /// occurrence they fired, together.
    func fireConcurrently(schedulers: Int = 6, limit: Int = 7) async throws -> [FiredSlot] {
        try await withThrowingTaskGroup(of: [FiredSlot].self) { group in
            for _ in 0..<schedulers {
                group.addTask {
                    var mine: [FiredSlot] = []
                    while true {
                        let batch = try await store.schedules.fireDue(limit: limit)
                        if batch.isEmpty { return mine }
                        mine += batch
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }
}
