import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

/// `POST /v1/push` with a time, and `/v1/schedules`.
@Suite struct ScheduleAPITests {
    @Test(arguments: Backend.available)
    func aPushForLaterAnswersAScheduleIDAndIsListedNotSent(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let at = world.clock.now + 3_600_000
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleAt":\#(at),"expiryTime":\#(at + 60_000)"#), client)
            #expect(id.count == 16)
            #expect(try await world.pushCount() == 0)

            let list = try await world.request(.get, "/v1/schedules", client)
            #expect(list.status == .ok)
            let items = try #require(try JSONSerialization.jsonObject(with: Data(list.body.readableBytesView)) as? [[String: Any]])
            #expect(items.count == 1)
            #expect(items.first?["schedule_id"] as? String == id)
            #expect(items.first?["scheduled_for"] as? Int64 == at)

            let one = try await world.request(.get, "/v1/schedules/\(id)", client)
            #expect(one.status == .ok)
            let json = try one.json()
            #expect(json["scheduled_for"] as? Int64 == at)
            let push = try #require(json["push"] as? [String: Any])
            #expect(push["scheduleAt"] as? Int64 == at)
            #expect(push["expiryTime"] as? Int64 == at + 60_000)
            #expect((push["message"] as? [String: Any])?["body"] as? String == "Hello")
        }
    }

    @Test(arguments: Backend.available)
    func scheduleInIsSecondsFromReceiptAndIsStoredAsScheduleAt(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleIn":7200"#), client)
            let json = try await world.request(.get, "/v1/schedules/\(id)", client).json()
            #expect(json["scheduled_for"] as? Int64 == world.clock.now + 7_200_000)
            let push = try #require(json["push"] as? [String: Any])
            #expect(push["scheduleIn"] == nil)
            #expect(push["scheduleAt"] as? Int64 == world.clock.now + 7_200_000)
        }
    }

    @Test(arguments: Backend.available)
    func aTimeInThePastOrWithinSendImmediatelyWithinIsSentNow(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend, sendImmediatelyWithin: .seconds(120)) { world, client in
            for timing in [#""scheduleAt":1000"#, #""scheduleIn":0"#, #""scheduleIn":120"#, #""scheduleAt":\#(world.clock.now + 100_000)"#]
            {
                let response = try await world.post(ScheduleHarness.push(timing), client)
                #expect(response.status == .ok)
                #expect(try response.json()["receipt_id"] is String, "\(timing)")
            }
            #expect(try await world.pushCount() == 4)
            _ = try await world.schedule(ScheduleHarness.push(#""scheduleIn":121"#), client)
        }
    }

    @Test(arguments: Backend.available)
    func aScheduledPushIsValidatedExactlyAsAnImmediateOne(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let later = #""scheduleIn":3600"#
            let big = String(repeating: "x", count: 5000)
            let cases: [(String, String)] = [
                (ScheduleHarness.push(later, body: big), "message"),
                (ScheduleHarness.push(later, target: #"{"devices":["not-a-uuid"]}"#), "target.devices[0]"),
                (ScheduleHarness.push(#""scheduleAt":1,"scheduleIn":7200"#), "scheduleIn"),
                (ScheduleHarness.push(#""scheduleIn":7200,"scheduleLocal":"2030-01-01T09:00""#), "scheduleLocal"),
                (ScheduleHarness.push(#""scheduleLocal":"tomorrow""#), "scheduleLocal"),
                (ScheduleHarness.push(#""scheduleIn":7200,"rate":{"per_second":-1}"#), "rate.per_second"),
            ]
            for (json, field) in cases {
                let scheduled = try await world.post(json, client)
                #expect(scheduled.status == .badRequest, "\(field): \(String(buffer: scheduled.body))")
                let error = try scheduled.error()
                if field != "message" { #expect(error["field"] as? String == field) }
                // The same push to send now is refused the same way.
                let immediate = try await world.post(json.replacingOccurrences(of: "3600", with: "0"), client)
                #expect(immediate.status == .badRequest)
            }
            #expect(try await world.pushCount() == 0)
            let list = try await world.request(.get, "/v1/schedules", client)
            #expect(String(buffer: list.body) == "[]")
        }
    }

    @Test(arguments: Backend.available)
    func putChangesTimeMessageAndTargetAndIsValidatedAgain(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleIn":3600"#), client)
            let at = world.clock.now + 7_200_000
            let device = UUID().uuidString.lowercased()
            let changed = try await world.request(
                .put, "/v1/schedules/\(id)",
                json: #"{"scheduleAt":\#(at),"message":{"body":"Changed"},"target":{"devices":["\#(device)"]}}"#, client)
            #expect(changed.status == .ok, "\(String(buffer: changed.body))")
            let json = try changed.json()
            #expect(json["schedule_id"] as? String == id)
            #expect(json["scheduled_for"] as? Int64 == at)
            let push = try #require(json["push"] as? [String: Any])
            #expect((push["message"] as? [String: Any])?["body"] as? String == "Changed")
            #expect((push["target"] as? [String: Any])?["devices"] as? [String] == [device])

            // A change that would not pass as a new push is refused, and nothing changes.
            let bad = try await world.request(.put, "/v1/schedules/\(id)", json: #"{"target":{"devices":["nope"]}}"#, client)
            #expect(bad.status == .badRequest)
            #expect(try bad.error()["field"] as? String == "target.devices[0]")
            let tooBig = try await world.request(
                .put, "/v1/schedules/\(id)", json: #"{"message":{"body":"\#(String(repeating: "y", count: 5000))"}}"#, client)
            #expect(tooBig.status == .badRequest)
            let both = try await world.request(.put, "/v1/schedules/\(id)", json: #"{"scheduleAt":1,"scheduleIn":5}"#, client)
            #expect(both.status == .badRequest)
            let after = try await world.request(.get, "/v1/schedules/\(id)", client).json()
            #expect(after["scheduled_for"] as? Int64 == at)

            // scheduleIn replaces scheduleAt.
            let moved = try await world.request(.put, "/v1/schedules/\(id)", json: #"{"scheduleIn":600}"#, client).json()
            #expect(moved["scheduled_for"] as? Int64 == world.clock.now + 600_000)
        }
    }

    @Test(arguments: Backend.available)
    func deleteCancelsAndAFiredOrCancelledScheduleIsNotFound(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let cancelled = try await world.schedule(ScheduleHarness.push(#""scheduleIn":3600"#), client)
            let fired = try await world.schedule(ScheduleHarness.push(#""scheduleIn":7200"#), client)
            #expect(try await world.request(.delete, "/v1/schedules/\(cancelled)", client).status == .noContent)
            #expect(try await world.request(.get, "/v1/schedules/\(cancelled)", client).status == .notFound)
            #expect(try await world.request(.delete, "/v1/schedules/\(cancelled)", client).status == .notFound)

            world.clock.advance(7_200_000)
            let slots = try await world.store.schedules.fireDue(limit: 100)
            #expect(slots.map(\.scheduleID) == [fired])
            #expect(try await world.pushCount() == 1)
            for method in [HTTPRequest.Method.get, .delete] {
                #expect(try await world.request(method, "/v1/schedules/\(fired)", client).status == .notFound)
            }
            let put = try await world.request(.put, "/v1/schedules/\(fired)", json: #"{"scheduleIn":600}"#, client)
            #expect(put.status == .notFound)
            #expect(try await world.request(.get, "/v1/schedules/0123456789abcdef", client).status == .notFound)
            #expect(try await world.request(.get, "/v1/schedules/nonsense", client).status == .notFound)
            #expect(String(buffer: try await world.request(.get, "/v1/schedules", client).body) == "[]")
        }
    }

    @Test(arguments: Backend.available)
    func anotherAppCannotReadChangeOrCancelASchedule(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleIn":3600"#), client)
            let intruder = world.other
            #expect(try await world.request(.get, "/v1/schedules/\(id)", as: intruder, client).status == .notFound)
            #expect(
                try await world.request(.put, "/v1/schedules/\(id)", as: intruder, json: #"{"scheduleIn":600}"#, client).status
                    == .notFound)
            #expect(try await world.request(.delete, "/v1/schedules/\(id)", as: intruder, client).status == .notFound)
            #expect(String(buffer: try await world.request(.get, "/v1/schedules", as: intruder, client).body) == "[]")
            // Untouched for its own app.
            let json = try await world.request(.get, "/v1/schedules/\(id)", client).json()
            #expect(json["scheduled_for"] as? Int64 == world.clock.now + 3_600_000)
            // Without credentials: 401.
            let anonymous = try await client.execute(uri: "/v1/schedules", method: .get)
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test(arguments: Backend.available)
    func aChangeToANearTimeFiresAtOnceUnderTheSameID(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let id = try await world.schedule(ScheduleHarness.push(#""scheduleIn":3600"#), client)
            let moved = try await world.request(.put, "/v1/schedules/\(id)", json: #"{"scheduleIn":5}"#, client).json()
            #expect(moved["scheduled_for"] as? Int64 == world.clock.now)
            let fired = try await world.store.schedules.fireDue(limit: 10)
            #expect(fired.map(\.scheduleID) == [id])
        }
    }

    @Test(arguments: Backend.available)
    func timeZonesAndDeliverySettingsAreValidatedNamingTheField(_ backend: Backend) async throws {
        try await ScheduleHarness.run(backend) { world, client in
            let device = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(world.fixture),
                body: body(#"{"os":"ios","registration_token":"\#(randomAPNsToken())","time_zone":"Mars/Olympus"}"#))
            #expect(device.status == .badRequest)
            #expect(try device.error()["field"] as? String == "time_zone")
            let token = randomAPNsToken()
            let good = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(world.fixture),
                body: body(#"{"os":"ios","registration_token":"\#(token)","time_zone":"Asia/Tokyo"}"#))
            #expect(good.status == .ok)
            #expect(try await world.store.devices.timeZones(applicationID: world.fixture.app.id) == ["Asia/Tokyo"])
            // A registration says everything: registering again without a zone clears it.
            let again = try await client.execute(
                uri: "/v1/registration", method: .post, headers: basic(world.fixture),
                body: body(#"{"os":"ios","registration_token":"\#(token)"}"#))
            #expect(again.status == .ok)
            #expect(try await world.store.devices.timeZones(applicationID: world.fixture.app.id).isEmpty)

            let path = "/admin/v1/apps/\(world.fixture.app.id.uuidString.lowercased())/delivery"
            let defaults = try await client.execute(uri: path, method: .get, headers: bearer(world.adminToken)).json()
            #expect(defaults["default_time_zone"] as? String == "UTC")
            #expect(defaults["rate_per_second"] is NSNull)
            let badZone = try await client.execute(
                uri: path, method: .put, headers: bearer(world.adminToken), body: body(#"{"default_time_zone":"Paris"}"#))
            #expect(badZone.status == .badRequest)
            #expect(try badZone.error()["field"] as? String == "default_time_zone")
            let badRate = try await client.execute(
                uri: path, method: .put, headers: bearer(world.adminToken), body: body(#"{"rate_per_second":0}"#))
            #expect(try badRate.error()["field"] as? String == "rate_per_second")
            let set = try await client.execute(
                uri: path, method: .put, headers: bearer(world.adminToken),
                body: body(#"{"default_time_zone":"Europe/Paris","rate_per_second":25}"#))
            #expect(set.status == .ok)
            #expect(
                try await world.store.deliverySettings.find(applicationID: world.fixture.app.id)
                    == AppDeliverySettings(defaultTimeZone: "Europe/Paris", ratePerSecond: 25))
            let cleared = try await client.execute(
                uri: path, method: .put, headers: bearer(world.adminToken), body: body(#"{"rate_per_second":null}"#)
            ).json()
            #expect(cleared["rate_per_second"] is NSNull)
            #expect(cleared["default_time_zone"] as? String == "Europe/Paris")
        }
    }
}
