import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import NIOHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Scheduled pushes across real `herald serve` processes: two on one PostgreSQL database fire
/// each schedule exactly once; one missed while the server was down fires at start-up.
@Suite(.serialized) struct ScheduleProcessTests {
    static let arguments = ["--workers", "2", "--send-immediately-within", "0"]

    func schedule(_ setup: ServerProcessTests.Setup, port: Int, at: Int64, body text: String = "Scheduled") async throws -> String {
        let json = try await setup.request(
            .POST, "/v1/push", port: port,
            body: #"{"message":{"body":"\#(text)"},"target":{"platform":"ios"},"scheduleAt":\#(at)}"#)
        guard let id = json["schedule_id"] as? String else { throw TestFailure(message: "not scheduled: \(json)") }
        return id
    }

    @Test func twoServersOnOnePostgresFireEachScheduleExactlyOnce() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await ServerProcessTests().withSetup(.postgres) { setup in
            _ = try await setup.seed(1)
            let first = try await setup.start(Self.arguments, name: "first")
            let second = try await setup.start(Self.arguments, name: "second")
            try await ServerProcessTests().withServer(first, second) {
                let count = 300
                // Created through both servers for an hour from now, then all moved to the same
                // instant two seconds ahead (however long a loaded machine took to create them).
                var ids: [String] = []
                for index in 0..<count {
                    ids.append(
                        try await schedule(
                            setup, port: index % 2 == 0 ? first.port : second.port, at: EpochClock.system.now.epochMilliseconds + 3_600_000,
                            body: "n\(index)"))
                }
                #expect(Set(ids).count == count)
                try await setup.db.database.query(
                    "UPDATE push_schedule_slots SET due_at = \(EpochClock.system.now.epochMilliseconds + 2_000)")

                try await DeliveryWorld.poll("every scheduled push is delivered", within: .seconds(90)) {
                    let open = try await setup.db.database.query("SELECT COUNT(*) AS n FROM pushes WHERE status <> 'done'")
                    let unfinished = try open.first?.int("n") ?? 1
                    return setup.mock.arrivals.count >= count && unfinished == 0
                }
                let pushes = try await setup.db.database.query("SELECT COUNT(*) AS n FROM pushes").first?.int("n")
                #expect(pushes == Int64(count))
                let slots = try await setup.db.database.query(
                    "SELECT COUNT(*) AS n, COUNT(DISTINCT push_id) AS p, MAX(fired_at - due_at) AS late FROM push_schedule_slots WHERE state = 'fired'"
                )
                #expect(try slots.first?.int("n") == Int64(count))
                #expect(try slots.first?.int("p") == Int64(count))
                #expect(try (slots.first?.int("late") ?? .max) < 5_000)
                // Each body once at the mock: no schedule fired twice, none was lost.
                let bodies = try setup.alertBodies()
                #expect(bodies.count == count)
                #expect(Set(bodies) == Set((0..<count).map { "n\($0)" }))
                // Both processes did part of the firing (not required for correctness; logged).
                first.kill(SIGTERM)
                second.kill(SIGTERM)
                #expect(try await first.waitForExit().status == 0)
                #expect(try await second.waitForExit().status == 0)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aScheduleDueWhileTheServerWasDownFiresAtStartUp(_ backend: Backend) async throws {
        try await ServerProcessTests().withSetup(backend) { setup in
            _ = try await setup.seed(2)
            let first = try await setup.start(Self.arguments, name: "first")
            try await ServerProcessTests().withServer(first) {
                _ = try await schedule(setup, port: first.port, at: EpochClock.system.now.epochMilliseconds + 3_600_000)
                first.kill(SIGTERM)
                #expect(try await first.waitForExit().status == 0)
            }
            // While the server is down, its time comes and goes (moved, rather than waited for).
            try await setup.db.database.query("UPDATE push_schedule_slots SET due_at = \(EpochClock.system.now.epochMilliseconds - 1_000)")
            let pending = try await setup.db.database.query("SELECT COUNT(*) AS n FROM push_schedule_slots WHERE state = 'pending'")
            #expect(try pending.first?.int("n") == 1)
            #expect(setup.mock.arrivals.count == 0)

            let second = try await setup.start(Self.arguments, name: "second")
            try await ServerProcessTests().withServer(second) {
                try await DeliveryWorld.poll("the missed push is delivered after the start") { setup.mock.arrivals.count == 2 }
                second.kill(SIGTERM)
                #expect(try await second.waitForExit().status == 0)
            }
            #expect(setup.mock.arrivals.count == 2)
        }
    }
}

extension ServerProcessTests.Setup {
    /// The alert bodies the mock APNs received, in arrival order.
    func alertBodies() throws -> [String] {
        try mock.received.map { received in
            let payload = try JSONSerialization.jsonObject(with: Data(received.payload)) as? [String: Any]
            return ((payload?["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String
                ?? (payload?["aps"] as? [String: Any])?["alert"] as? String ?? ""
        }
    }
}
