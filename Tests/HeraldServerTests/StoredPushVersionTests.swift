import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Rows written before pushes were stored typed (version 0: the request text alone) are still
/// delivered, shown and changed; and a push is refused, naming its field, before it is stored.
@Suite struct StoredPushVersionTests {
    /// Writes a push and its fan-out job as Herald did before `AcceptedPush`: the request as given.
    static func insertVersion0(_ db: TestDatabase, id: UUID, applicationID: UUID, request: String, time: Int64) async throws {
        try await db.database.transaction { connection in
            try await connection.query(
                """
                INSERT INTO pushes (id, app_id, request, status, created_at, expires_at)
                VALUES (\(id), \(applicationID), \(request), 'queued', \(time), \(Int64?.none))
                """)
            try await connection.query(
                """
                INSERT INTO push_jobs (push_id, kind, cursor, device_ids, attempt, state, available_at, lease_until, created_at)
                VALUES (\(id), 'fanout', 0, '', 0, 'ready', \(time), 0, \(time))
                """)
        }
    }

    @Test(arguments: Backend.available)
    func aPushStoredInTheOldShapeIsStillDelivered(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let devices = [try await world.register(), try await world.register(), try await world.register()]
            let id = UUID.timeOrdered(milliseconds: EpochClock.system.now.epochMilliseconds)
            try await Self.insertVersion0(
                world.db, id: id, applicationID: world.fixture.app.id,
                request: #"{"message":{"body":"from before","custom":{"ios":{"badge":3}}},"target":{"platform":"ios"},"scheduleIn":0}"#,
                time: EpochClock.system.now.epochMilliseconds)

            let status = try await world.finished(id.lowercasedString, client)
            #expect(status["delivered"] as? Int == 3)
            #expect(status["failed"] as? Int == 0)
            #expect(Set(world.mock.received.map(\.deviceToken)) == Set(devices.map(\.registrationToken)))
            for notification in world.mock.received {
                let payload = try #require(try JSONSerialization.jsonObject(with: Data(notification.payload)) as? [String: Any])
                let aps = try #require(payload["aps"] as? [String: Any])
                #expect(aps["alert"] as? String == "from before")
                #expect(aps["badge"] as? Int == 3)
                #expect(payload["receiptId"] as? String == id.lowercasedString)
            }
        }
    }

    @Test(arguments: Backend.available)
    func anOldPushTodaysRulesRefuseIsNotSent(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            _ = try await world.register()
            let id = UUID.timeOrdered(milliseconds: EpochClock.system.now.epochMilliseconds)
            try await Self.insertVersion0(
                world.db, id: id, applicationID: world.fixture.app.id,
                request: #"{"message":{"custom":{"ios":{"badge":"many"}}},"target":{"platform":"ios"}}"#,
                time: EpochClock.system.now.epochMilliseconds)
            let status = try await world.finished(id.lowercasedString, client)
            #expect(status["delivered"] as? Int == 0)
            #expect(world.mock.received.isEmpty)
            let stored = try #require(try await world.db.store.pushes.find(id: id, applicationID: world.fixture.app.id))
            #expect(throws: StoredPushError.self) { try stored.accepted() }
        }
    }

    @Test(arguments: Backend.available)
    func aScheduleStoredInTheOldShapeIsShownChangedAndFired(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let due = world.clock.now + 3_600_000
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleAt":\#(due)"#), client)
            // As an older Herald stored it: the request text, normalised.
            let old = ScheduleHarness.push(#""scheduleAt":\#(due)"#, body: "stored before")
            try await world.db.database.query("UPDATE push_schedules SET request = \(old) WHERE id = \(id)")

            let shown = try await world.request(.get, "/v1/schedules/\(id)", client).json()
            let push = try #require(shown["push"] as? [String: Any])
            #expect((push["message"] as? [String: Any])?["body"] as? String == "stored before")
            #expect(push["scheduleAt"] as? Int64 == due)

            // A change starts from the old request and stores the current version.
            let changed = try await world.request(.put, "/v1/schedules/\(id)", json: #"{"expiryTime":\#(due + 60_000)}"#, client)
            #expect(changed.status == .ok)
            let changedPush = try #require(try changed.json()["push"] as? [String: Any])
            #expect((changedPush["message"] as? [String: Any])?["body"] as? String == "stored before")
            #expect(changedPush["expiryTime"] as? Int64 == due + 60_000)

            // Fired from the old shape, the push a worker reads is that request, checked.
            try await world.db.database.query("UPDATE push_schedules SET request = \(old) WHERE id = \(id)")
            world.clock.set(due)
            let fired = try #require(try await world.store.schedules.fireDue(limit: 10).first)
            let stored = try #require(try await world.store.pushes.find(id: fired.pushID, applicationID: world.fixture.app.id))
            let accepted = try stored.accepted()
            #expect(accepted.push.body == "stored before")
            #expect(
                accepted.push.audience
                    == .selection(platforms: Set(PlatformType.allCases), topics: [], customUserIDs: [], interactiveOnly: false))
        }
    }

    @Test(arguments: Backend.available)
    func aRefusedPushNamesItsFieldAndIsNotStored(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let cases: [(json: String, field: String)] = [
                (#"{"message":{"custom":{"ios":{"badge":"many"}}},"target":{"platform":"ios"}}"#, "message.custom.ios.badge"),
                (
                    #"{"message":{"custom":{"android":{"notification":{"color":"red"}}}},"target":{"platform":"all"}}"#,
                    "message.custom.android.notification.color"
                ),
                (#"{"message":{"body":"x"},"target":{"devices":["nope"]}}"#, "target.devices[0]"),
                (#"{"message":{"body":"x"},"target":{"platform":"ios"},"scheduleIn":-1}"#, "scheduleIn"),
            ]
            for (json, field) in cases {
                let refused = try await world.post(json, client)
                #expect(refused.status == .badRequest, "\(json)")
                #expect(try refused.error()["field"] as? String == field, "\(json)")
            }
            // A change to a schedule is checked the same way.
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleIn":600"#), client)
            let change = try await world.request(
                .put, "/v1/schedules/\(id)", json: #"{"message":{"custom":{"ios":{"badge":"many"}}}}"#, client)
            #expect(change.status == .badRequest)
            #expect(try change.error()["field"] as? String == "message.custom.ios.badge")
            #expect(try await world.pushCount() == 0)
        }
    }
}
