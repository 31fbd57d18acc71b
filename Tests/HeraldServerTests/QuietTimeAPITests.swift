import Foundation
import HeraldCore
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// Quiet time through the registration, push and admin APIs: stored and shown, kept when a
/// request leaves it out (as the PCF SDKs do), and every bad value refused naming its JSON path.
@Suite struct QuietTimeAPITests {
    func adminQuietTime(_ world: DeliveryWorld, _ uuid: String) -> String {
        "/admin/v1/apps/\(world.fixture.app.id.lowercasedString)/devices/\(uuid)/quiet_time"
    }

    @Test(arguments: Backend.available)
    func theRegistrationAndAdminAPIsSetKeepAndRemoveADevicesQuietTime(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let (_, admin) = try await world.db.store.adminTokens.create(tenantID: nil, name: "root")
            let registered = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(world.fixture),
                body: body(
                    #"{"os":"ios","registration_token":"\#(randomAPNsToken())","time_zone":"Europe/Paris","quiet_time":{"start":"22:30","end":"06:45"}}"#
                ))
            #expect(registered.status == .ok, "\(String(buffer: registered.body))")
            let uuid = try #require(try registered.json()["device_uuid"] as? String)
            func shown() async throws -> [String: Any] {
                try await client.execute(uri: adminQuietTime(world, uuid), method: .get, headers: bearer(admin)).json()
            }
            #expect(try await shown()["quiet_time"] as? [String: String] == ["start": "22:30", "end": "06:45"])
            #expect(try await shown()["time_zone"] as? String == "Europe/Paris")
            // What the PCF SDK sends (no quiet_time) keeps it.
            let kept = try await client.execute(
                uri: "/v1/registration/\(uuid)", method: .put, headers: basic(world.fixture), body: body(#"{"device_alias":"phone"}"#))
            #expect(kept.status == .ok)
            #expect(try await shown()["quiet_time"] as? [String: String] == ["start": "22:30", "end": "06:45"])
            // The admin API changes it, null removes it.
            let changed = try await client.execute(
                uri: adminQuietTime(world, uuid), method: .put, headers: bearer(admin),
                body: body(#"{"quiet_time":{"start":"23:00","end":"07:00"}}"#))
            #expect(changed.status == .ok, "\(String(buffer: changed.body))")
            #expect(try changed.json()["quiet_time"] as? [String: String] == ["start": "23:00", "end": "07:00"])
            let removed = try await client.execute(
                uri: "/v1/registration/\(uuid)", method: .put, headers: basic(world.fixture), body: body(#"{"quiet_time":null}"#))
            #expect(removed.status == .ok)
            #expect(try await shown()["quiet_time"] is NSNull)
            let unknown = try await client.execute(
                uri: adminQuietTime(world, UUID().uuidString), method: .get, headers: bearer(admin))
            #expect(unknown.status == .notFound)
            // The app's default: shown as null until set.
            let settings = "/admin/v1/apps/\(world.fixture.app.id.lowercasedString)/delivery"
            #expect(try await client.execute(uri: settings, method: .get, headers: bearer(admin)).json()["quiet_time"] is NSNull)
        }
    }

    @Test(arguments: Backend.available)
    func badQuietTimesAreRefusedNamingTheirPath(_ backend: Backend) async throws {
        try await DeliveryWorld.run(backend) { world, client in
            let (_, admin) = try await world.db.store.adminTokens.create(tenantID: nil, name: "root")
            let device = try await world.register()
            let uuid = device.uuid.lowercasedString
            let settings = "/admin/v1/apps/\(world.fixture.app.id.lowercasedString)/delivery"
            let cases: [(String, String)] = [
                (#"{"start":"25:00","end":"07:00"}"#, "quiet_time.start"),
                (#"{"start":"22:00","end":"7:00"}"#, "quiet_time.end"),
                (#"{"start":"22:00","end":"07:60"}"#, "quiet_time.end"),
                (#"{"start":"22:00"}"#, "quiet_time.end"),
                (#"{"end":"07:00"}"#, "quiet_time.start"),
                (#"{"start":2200,"end":"07:00"}"#, "quiet_time.start"),
                (#"{"start":"22:00","end":"22:00"}"#, "quiet_time.end"),
                (#"{"start":"22:00","end":"07:00","zone":"UTC"}"#, "quiet_time.zone"),
                (#""22:00-07:00""#, "quiet_time"),
                ("[]", "quiet_time"),
            ]
            for (value, field) in cases {
                let requests: [(String, HTTPRequest.Method, HTTPFields)] = [
                    ("/v1/registration/\(uuid)", .put, basic(world.fixture)),
                    (adminQuietTime(world, uuid), .put, bearer(admin)),
                    (settings, .put, bearer(admin)),
                ]
                for (path, method, headers) in requests {
                    let response = try await client.execute(
                        uri: path, method: method, headers: headers, body: body(#"{"quiet_time":\#(value)}"#))
                    #expect(response.status == .badRequest, "\(path) \(value)")
                    #expect(try response.error()["field"] as? String == field, "\(path) \(value)")
                }
            }
            let registration = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(world.fixture),
                body: body(#"{"os":"ios","registration_token":"\#(randomAPNsToken())","quiet_time":{"start":"9:00","end":"10:00"}}"#))
            #expect(registration.status == .badRequest)
            #expect(try registration.error()["field"] as? String == "quiet_time.start")
            let missing = try await client.execute(uri: adminQuietTime(world, uuid), method: .put, headers: bearer(admin), body: body("{}"))
            #expect(missing.status == .badRequest)
            #expect(try missing.error()["field"] as? String == "quiet_time")
            for policy in [#""later""#, "1", "true", #"{"mode":"hold"}"#] {
                let response = try await client.execute(
                    uri: "/v1/push", method: .post, headers: appAuth(world.fixture),
                    body: body(#"{"message":{"body":"x"},"target":{"platform":"ios"},"quiet_time":\#(policy)}"#))
                #expect(response.status == .badRequest, "\(policy)")
                #expect(try response.error()["field"] as? String == "quiet_time", "\(policy)")
            }
        }
    }
}
