import Foundation
import HeraldCore
import HeraldMocks
import HeraldStore
import HeraldTestSupport
import HummingbirdTesting
import Testing

/// Autobadge end to end: `custom.ios.badge` as `"+N"`, `"-N"` or `"auto"` through `POST /v1/push`,
/// the workers and the mock APNs, each device getting its own number; the app resetting it
/// through `PUT /v1/registration`, an operator through the admin API.
@Suite struct AutobadgeTests {
    /// Sends a push whose iOS badge is `badge` (JSON text), waits until it is done, and returns
    /// the badge each device token got.
    func push(_ badge: String, _ world: DeliveryWorld, _ client: any TestClientProtocol) async throws -> [String: Int] {
        let before = world.mock.received.count
        let receipt = try await world.send(
            #"{"message":{"body":"news","custom":{"ios":{"badge":\#(badge)}}},"target":{"platform":"ios"}}"#, client)
        let status = try await world.finished(receipt, client)
        #expect(status["failed"] as? Int == 0, "\(status)")
        var badges: [String: Int] = [:]
        for received in world.mock.received.dropFirst(before) {
            let json = try #require(try JSONSerialization.jsonObject(with: Data(received.payload)) as? [String: Any])
            let aps = try #require(json["aps"] as? [String: Any])
            #expect(badges[received.deviceToken] == nil, "\(received.deviceToken) got two notifications")
            badges[received.deviceToken] = try #require(aps["badge"] as? Int, "no badge")
        }
        return badges
    }

    func adminBadge(_ world: DeliveryWorld, _ device: Device) -> String {
        "/admin/v1/apps/\(world.fixture.app.id.lowercasedString)/devices/\(device.uuid.lowercasedString)/badge"
    }

    @Test(arguments: Backend.available)
    func eachDeviceGetsItsOwnCountWhichTheAppAndTheAdminAPIReset(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let (_, admin) = try await world.db.store.adminTokens.create(tenantID: nil, name: "root")
            var devices: [Device] = []
            for _ in 0..<3 { devices.append(try await world.register()) }
            let tokens = devices.map(\.registrationToken)
            func each(_ values: [Int]) -> [String: Int] { Dictionary(uniqueKeysWithValues: zip(tokens, values)) }

            #expect(try await push(#""+2""#, world, client) == each([2, 2, 2]))
            #expect(try await push(#""auto""#, world, client) == each([3, 3, 3]))

            // The app cleared its badge; a PUT without `badge` (what the PCF SDK sends) keeps it.
            let reset = try await client.execute(
                uri: "/v1/registration/\(devices[0].uuid.lowercasedString)", method: .put, headers: basic(world.fixture),
                body: body(#"{"badge":0}"#))
            #expect(reset.status == .ok, "\(String(buffer: reset.body))")
            let untouched = try await client.execute(
                uri: "/v1/registration/\(devices[2].uuid.lowercasedString)", method: .put, headers: basic(world.fixture),
                body: body(#"{"device_alias":"kitchen"}"#))
            #expect(untouched.status == .ok)
            // An operator sets another.
            let set = try await client.execute(
                uri: adminBadge(world, devices[1]), method: .put, headers: bearer(admin), body: body(#"{"badge":10}"#))
            #expect(set.status == .ok, "\(String(buffer: set.body))")
            #expect(try set.json()["badge"] as? Int == 10)
            let read = try await client.execute(uri: adminBadge(world, devices[2]), method: .get, headers: bearer(admin))
            #expect(try read.json()["badge"] as? Int == 3)
            #expect(try read.json()["device_uuid"] as? String == devices[2].uuid.lowercasedString)

            // Never below 0; a number sets every count, and "+1" counts on from it.
            #expect(try await push(#""-1""#, world, client) == each([0, 9, 2]))
            #expect(try await push("5", world, client) == each([5, 5, 5]))
            #expect(try await push(#""+1""#, world, client) == each([6, 6, 6]))
            let after = try await client.execute(uri: adminBadge(world, devices[0]), method: .get, headers: bearer(admin))
            #expect(try after.json()["badge"] as? Int == 6)
        }
    }

    /// A device whose first request APNs refuses (429) is retried in a new batch: it gets the
    /// number counted with the first attempt, and the next push counts on from it, once.
    @Test(arguments: Backend.available)
    func aRetriedDeviceIsCountedOnce(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend, DeliveryWorld.Options(firstRetryDelay: .milliseconds(20))) { world, client in
            let refused = try await world.register()
            let other = try await world.register()
            world.mock.update {
                $0.rejected[refused.registrationToken] = .init(status: 429, reason: "TooManyRequests", times: 1)
            }
            let first = try await push(#""auto""#, world, client)
            #expect(world.mock.behavior.rejected[refused.registrationToken] == nil, "the device was not refused once")
            #expect(world.mock.statistics.requests >= world.mock.received.count + 1)
            #expect(first == [refused.registrationToken: 1, other.registrationToken: 1])
            #expect(try await push(#""auto""#, world, client) == [refused.registrationToken: 2, other.registrationToken: 2])
        }
    }

    @Test(arguments: Backend.available)
    func badBadgesAreRefusedNamingTheField(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let (_, admin) = try await world.db.store.adminTokens.create(tenantID: nil, name: "root")
            let device = try await world.register()
            for badge in [#""+""#, #""3""#, #""+1.5""#, "-1", "true", #""lots""#] {
                let response = try await client.execute(
                    uri: "/v1/push", method: .post, headers: appAuth(world.fixture),
                    body: body(#"{"message":{"custom":{"ios":{"badge":\#(badge)}}},"target":{"platform":"ios"}}"#))
                #expect(response.status == .badRequest, "\(badge)")
                #expect(try response.error()["field"] as? String == "message.custom.ios.badge", "\(badge)")
            }
            for badge in ["-1", #""0""#, "1.5", "2000000"] {
                let response = try await client.execute(
                    uri: "/v1/registration/\(device.uuid.lowercasedString)", method: .put, headers: basic(world.fixture),
                    body: body(#"{"badge":\#(badge)}"#))
                #expect(response.status == .badRequest, "\(badge)")
                #expect(try response.error()["field"] as? String == "badge", "\(badge)")
                let byAdmin = try await client.execute(
                    uri: adminBadge(world, device), method: .put, headers: bearer(admin), body: body(#"{"badge":\#(badge)}"#))
                #expect(byAdmin.status == .badRequest, "\(badge)")
                #expect(try byAdmin.error()["field"] as? String == "badge", "\(badge)")
            }
            let missing = try await client.execute(uri: adminBadge(world, device), method: .put, headers: bearer(admin), body: body("{}"))
            #expect(missing.status == .badRequest)
            #expect(try missing.error()["field"] as? String == "badge")
            let unknown = try await client.execute(
                uri: "/admin/v1/apps/\(world.fixture.app.id.lowercasedString)/devices/\(UUID().uuidString)/badge", method: .get,
                headers: bearer(admin))
            #expect(unknown.status == .notFound)
        }
    }
}
