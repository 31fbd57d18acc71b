import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

/// `"quiet_time": "hold"` end to end, on the test clock: devices in their quiet time (in their
/// own zone) are held as a batch due when it ends, shown on the receipt, and sent then — across
/// daylight-saving changes, with throttling, and with local-time schedules.
@Suite struct QuietTimeHoldTests {
    /// Runs `body` in a delivery world whose store, workers, API and mock APNs read `clock`.
    func run(
        _ backend: Backend, _ clock: TestClock, batchSize: Int = 2,
        _ body: @escaping @Sendable (DeliveryWorld, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await DeliveryWorld.run(backend, .init(batchSize: batchSize, clock: clock.epochClock)) { world, client in
            // The provider token is issued on the test clock: the mock judges its age on it too.
            world.mock.update { $0.clock = clock.epochClock }
            try await body(world, client)
        }
    }

    /// Registers an iOS device through `POST /v1/registration` with `fields` (JSON members, or
    /// empty); returns its token.
    func register(_ fields: String, _ world: DeliveryWorld, _ client: any TestClientProtocol) async throws -> String {
        let token = randomAPNsToken()
        let extra = fields.isEmpty ? "" : ",\(fields)"
        let response = try await client.execute(
            uri: "/v1/registration", method: .post, headers: basic(world.fixture),
            body: body(#"{"os":"ios","registration_token":"\#(token)"\#(extra)}"#))
        #expect(response.status == .ok, "\(String(buffer: response.body))")
        return token
    }

    func tokens(_ world: DeliveryWorld) -> [String] { world.mock.received.map(\.deviceToken).sorted() }

    func held(_ status: [String: Any]) -> [[String: Int64]] {
        ((status["quiet_time_held"] as? [[String: Any]]) ?? []).map { entry in
            entry.compactMapValues { ($0 as? NSNumber)?.int64Value }
        }
    }

    static let paris = #""time_zone":"Europe/Paris","quiet_time":{"start":"22:00","end":"07:00"}"#

    /// 23:00 in Paris on the night the clocks change: the quiet time ends at 07:00 local, which
    /// is 7 hours later in spring (CET → CEST) and 9 in autumn (CEST → CET).
    @Test(
        arguments: Backend.available,
        [
            (1_774_735_200_000, 1_774_760_400_000),  // 2026-03-28T22:00Z → 2026-03-29T05:00Z
            (1_792_875_600_000, 1_792_908_000_000),  // 2026-10-24T21:00Z → 2026-10-25T06:00Z
        ])
    func quietDevicesAreHeldUntilTheirQuietTimeEndsAcrossADaylightSavingChange(
        _ backend: Backend, times: (now: Int64, due: Int64)
    ) async throws {
        let clock = TestClock(times.now)
        try await run(backend, clock) { world, client in
            let quiet = try await register(Self.paris, world, client)
            let loud = try await register(#""time_zone":"Europe/Paris""#, world, client)
            // 07:00 (spring) or 06:00 (autumn) in Tokyo: after its quiet time, or at its end, which
            // is not quiet.
            let tokyo = try await register(#""time_zone":"Asia/Tokyo","quiet_time":{"start":"22:00","end":"06:00"}"#, world, client)
            let receipt = try await world.send(
                #"{"message":{"body":"tonight"},"target":{"platform":"ios"},"quiet_time":"hold"}"#, client)
            try await DeliveryWorld.poll("the devices not in their quiet time got it") {
                try await world.status(receipt, client)["delivered"] as? Int == 2
            }
            let waiting = try await world.status(receipt, client)
            #expect(waiting["status"] as? String == "sending", "\(waiting)")
            #expect(waiting["delivered"] as? Int == 2)
            #expect(waiting["pending"] as? Int == 1)
            #expect(held(waiting) == [["due_at": times.due, "devices": 1]], "\(waiting)")
            #expect(tokens(world) == [loud, tokyo].sorted())
            // Held, not tried: the batch keeps its attempt.
            let jobs = try await world.db.database.query(
                "SELECT attempt, available_at FROM push_jobs WHERE push_id = \(try #require(UUID(uuidString: receipt))) AND quiet = 1")
            #expect(try jobs.map { try $0.int("attempt") } == [0])

            clock.set(times.due)
            let done = try await world.finished(receipt, client)
            #expect(done["delivered"] as? Int == 3, "\(done)")
            #expect(done["quiet_time_held"] == nil)
            #expect(tokens(world) == [loud, tokyo, quiet].sorted())
        }
    }

    /// A throttled push (1 device a second) with two devices in their quiet time: they are held,
    /// and when their quiet time ends the send gate still lets one batch a second through.
    @Test(arguments: Backend.available)
    func heldBatchesStillKeepThePushsRate(_ backend: Backend) async throws {
        let clock = TestClock(1_800_050_400_000)  // 2027-01-15T22:00Z, 23:00 in Paris
        let due: Int64 = 1_800_079_200_000  // 07:00 in Paris
        try await run(backend, clock, batchSize: 500) { world, client in
            _ = try await register(Self.paris, world, client)
            _ = try await register(Self.paris, world, client)
            let loud = try await register("", world, client)
            let receipt = try await world.send(
                #"{"message":{"body":"slow"},"target":{"platform":"ios"},"rate":{"per_second":1},"quiet_time":"hold"}"#, client)
            // One batch of one device a second: two are held, one is sent.
            for step in 1...3 {
                if step > 1 { clock.advance(1000) }
                try await DeliveryWorld.poll("\(step) batches taken") {
                    let status = try await world.status(receipt, client)
                    return held(status).map { $0["devices"] ?? 0 }.reduce(0, +) + Int64(status["delivered"] as? Int ?? 0) >= Int64(step)
                }
            }
            try await DeliveryWorld.poll("two devices held, one sent") {
                let status = try await world.status(receipt, client)
                return held(status) == [["due_at": due, "devices": 2]] && status["delivered"] as? Int == 1
            }
            #expect(tokens(world) == [loud])

            clock.set(due)
            try await DeliveryWorld.poll("one held device sent") { world.mock.received.count >= 2 }
            #expect(world.mock.received.count == 2)
            clock.advance(1000)
            let done = try await world.finished(receipt, client)
            #expect(done["delivered"] as? Int == 3, "\(done)")
        }
    }

    /// A `scheduleLocal` push at 06:30 in each device's zone: Tokyo's device (no quiet time) gets
    /// it at its 06:30; the Paris device's quiet time runs to 07:00, so its slot's push holds it
    /// until then.
    @Test(arguments: Backend.available)
    func aLocalTimePushHoldsADeviceWhoseQuietTimeHasNotEnded(_ backend: Backend) async throws {
        let clock = TestClock(1_800_000_000_000)
        try await run(backend, clock) { world, client in
            let paris = try await register(Self.paris, world, client)
            let tokyo = try await register(#""time_zone":"Asia/Tokyo""#, world, client)
            let response = try await client.execute(
                uri: "/v1/push", method: .post, headers: appAuth(world.fixture),
                body: body(
                    #"{"message":{"body":"morning"},"target":{"platform":"ios"},"scheduleLocal":"2027-01-16T06:30","quiet_time":"hold"}"#))
            #expect(response.status == .ok, "\(String(buffer: response.body))")

            // Each zone's slot is its own push; those due fire together.
            clock.set(1_800_048_600_000)  // 2027-01-15T21:30Z, 06:30 in Tokyo
            for slot in try await world.db.store.schedules.fireDue(limit: 100) {
                _ = try await world.finished(slot.pushID.lowercasedString, client)
            }
            #expect(tokens(world) == [tokyo])

            clock.set(1_800_077_400_000)  // 2027-01-16T05:30Z, 06:30 in Paris
            let slots = try await world.db.store.schedules.fireDue(limit: 100).map { $0.pushID.lowercasedString }
            var parisSlot: String?
            try await DeliveryWorld.poll("the Paris device is held") {
                for slot in slots {
                    let status = try await world.status(slot, client)
                    if held(status) == [["due_at": 1_800_079_200_000, "devices": 1]] { parisSlot = slot }
                }
                return parisSlot != nil
            }
            let slot = try #require(parisSlot)
            #expect(tokens(world) == [tokyo])
            clock.set(1_800_079_200_000)  // 07:00 in Paris
            #expect(try await world.finished(slot, client)["delivered"] as? Int == 1)
            #expect(tokens(world) == [paris, tokyo].sorted())
        }
    }
}
