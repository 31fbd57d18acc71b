import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import NIOHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Recurring schedules across real `herald serve` processes and the mock APNs: two servers on
/// one PostgreSQL database fire each occurrence exactly once; occurrences missed while every
/// server was down fire once at start-up within the grace window and are skipped (and recorded)
/// beyond it.
@Suite(.serialized) struct RecurringScheduleProcessTests {
    static let arguments = ["--workers", "2"]

    /// Creates a yearly recurring schedule (its first occurrence months away at most a year) and
    /// returns its id; the test then moves `next_at` where it wants the occurrence.
    func schedule(_ setup: ServerProcessTests.Setup, port: Int, body text: String) async throws -> String {
        let json = try await setup.request(
            .POST, "/v1/push", port: port,
            body: #"{"message":{"body":"\#(text)"},"target":{"platform":"ios"},"schedule":{"cron":"0 0 1 1 *","time_zone":"UTC"}}"#)
        guard let id = json["schedule_id"] as? String else { throw TestFailure(message: "not scheduled: \(json)") }
        return id
    }

    @Test func twoServersOnOnePostgresFireEachOccurrenceExactlyOnce() async throws {
        guard Backend.available.contains(.postgres) else { return }
        try await ServerProcessTests().withSetup(.postgres) { setup in
            _ = try await setup.seed(1)
            let first = try await setup.start(Self.arguments, name: "first")
            let second = try await setup.start(Self.arguments, name: "second")
            try await ServerProcessTests().withServer(first, second) {
                let count = 100
                var ids: [String] = []
                for index in 0..<count {
                    ids.append(try await schedule(setup, port: index % 2 == 0 ? first.port : second.port, body: "r\(index)"))
                }
                #expect(Set(ids).count == count)
                // Every schedule's occurrence comes two seconds from now, for both servers at once.
                try await setup.db.database.query("UPDATE push_schedules SET next_at = \(EpochClock.system.now.epochMilliseconds + 2_000)")

                try await DeliveryWorld.poll("every occurrence is delivered", within: .seconds(90)) {
                    let open = try await setup.db.database.query("SELECT COUNT(*) AS n FROM pushes WHERE status <> 'done'")
                    let unfinished = try open.first?.int("n") ?? 1
                    return setup.mock.arrivals.count >= count && unfinished == 0
                }
                #expect(try await setup.db.database.query("SELECT COUNT(*) AS n FROM pushes").first?.int("n") == Int64(count))
                let occurrences = try await setup.db.database.query(
                    "SELECT COUNT(*) AS n, COUNT(DISTINCT schedule_id) AS s, COUNT(DISTINCT push_id) AS p FROM push_schedule_slots WHERE state = 'fired'"
                )
                #expect(try occurrences.first?.int("n") == Int64(count))
                #expect(try occurrences.first?.int("s") == Int64(count))
                #expect(try occurrences.first?.int("p") == Int64(count))
                // Each moved on to its next 1 January, one push sent.
                let rows = try await setup.db.database.query("SELECT fired_count, next_at, state FROM push_schedules")
                #expect(try rows.allSatisfy { try $0.int("fired_count") == 1 && $0.string("state") == "scheduled" })
                #expect(try rows.allSatisfy { try $0.int("next_at") > EpochClock.system.now.epochMilliseconds + 60_000 })
                // Each body once at the mock.
                let bodies = try setup.alertBodies()
                #expect(bodies.count == count)
                #expect(Set(bodies) == Set((0..<count).map { "r\($0)" }))
                first.kill(SIGTERM)
                second.kill(SIGTERM)
                #expect(try await first.waitForExit().status == 0)
                #expect(try await second.waitForExit().status == 0)
            }
        }
    }

    @Test(arguments: Backend.available)
    func occurrencesMissedWhileTheServerWasDownFireOnceWithinTheGraceWindowAndAreSkippedBeyondIt(_ backend: Backend) async throws {
        try await ServerProcessTests().withSetup(backend) { setup in
            _ = try await setup.seed(2)
            let first = try await setup.start(Self.arguments, name: "first")
            var within = ""
            var beyond = ""
            try await ServerProcessTests().withServer(first) {
                within = try await schedule(setup, port: first.port, body: "within")
                beyond = try await schedule(setup, port: first.port, body: "beyond")
                first.kill(SIGTERM)
                #expect(try await first.waitForExit().status == 0)
            }
            // While the server is down, one occurrence comes ten minutes ago, the other two hours
            // ago (moved, rather than waited for); the grace window is an hour.
            let now = EpochClock.system.now.epochMilliseconds
            try await setup.db.database.query("UPDATE push_schedules SET next_at = \(now - 600_000) WHERE id = \(within)")
            try await setup.db.database.query("UPDATE push_schedules SET next_at = \(now - 7_200_000) WHERE id = \(beyond)")
            #expect(setup.mock.arrivals.count == 0)

            let second = try await setup.start(Self.arguments + ["--missed-occurrence-grace", "3600"], name: "second")
            try await ServerProcessTests().withServer(second) {
                try await DeliveryWorld.poll("the occurrence within the window is delivered after the start") {
                    let done = try await setup.db.database.query("SELECT COUNT(*) AS n FROM pushes WHERE status = 'done'")
                    let finished = try done.first?.int("n") ?? 0
                    return setup.mock.arrivals.count >= 2 && finished == 1
                }
                second.kill(SIGTERM)
                #expect(try await second.waitForExit().status == 0)
            }
            // Once, to both devices; the other was skipped, recorded, and moved to next year.
            #expect(try setup.alertBodies() == ["within", "within"])
            #expect(try await setup.db.database.query("SELECT COUNT(*) AS n FROM pushes").first?.int("n") == 1)
            let history = try await setup.db.database.query(
                "SELECT schedule_id, state, due_at, skipped_until FROM push_schedule_slots ORDER BY schedule_id")
            let byID = try Dictionary(uniqueKeysWithValues: history.map { (try $0.string("schedule_id"), $0) })
            #expect(try byID[within]?.string("state") == "fired")
            #expect(try byID[within]?.int("due_at") == now - 600_000)
            #expect(try byID[beyond]?.string("state") == "skipped")
            #expect(try byID[beyond]?.int("due_at") == now - 7_200_000)
            let next = try await setup.db.database.query("SELECT next_at FROM push_schedules WHERE id = \(beyond)").first?.int("next_at")
            #expect(try byID[beyond]?.int("skipped_until") == next)
            #expect((next ?? 0) > now)
        }
    }
}
