import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `POST /v1/analytics` with batches shaped as the PCF SDKs send them, and what it feeds.
@Suite struct AnalyticsAPITests {
    func post(_ client: any TestClientProtocol, _ headers: HTTPFields, _ json: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/analytics", method: .post, headers: headers, body: ByteBuffer(string: json))
    }

    func receipt(_ client: any TestClientProtocol, _ fixture: Fixture) async throws -> String {
        let response = try await client.execute(
            uri: "/v1/push", method: .post, headers: appAuth(fixture),
            body: ByteBuffer(string: #"{"message":{"body":"hi"},"target":{"platforms":["ios","android"]}}"#))
        return try #require(try response.json()["receipt_id"] as? String)
    }

    @Test(arguments: Backend.available)
    func bothSDKsBatchesCountForTheirPush(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let (android, androidSecret) = try await harness.store.platforms.create(
                applicationID: fixture.app.id, name: "android", type: .android, credentials: try Fixture.credentials(for: .android))
            let receipt = try await receipt(client, fixture)
            let nowMillis = EpochClock.system.now.epochMilliseconds
            let nowSeconds = nowMillis / 1000

            // The iOS SDK: milliseconds, upper-case uuids, "Basic" and two spaces.
            let ios = try await post(
                client, basic(fixture, spaces: 2),
                #"""
                {"events":[
                  {"receiptId":"\#(receipt.uppercased())","eventType":"pcf_push_event_type_push_notification_received","eventTime":"\#(nowMillis)",
                   "deviceUuid":"8E0F2C46-1B0B-4C43-9D1A-6B0F6D3F2A10","sdkVersion":"1.6.1","platformType":"ios",
                   "platformUuid":"\#(fixture.platform.id.uuidString)"},
                  {"receiptId":"\#(receipt.uppercased())","eventType":"pcf_push_event_type_push_notification_opened","eventTime":"\#(nowMillis + 5)",
                   "deviceUuid":"8E0F2C46-1B0B-4C43-9D1A-6B0F6D3F2A10","sdkVersion":"1.6.1","platformType":"ios",
                   "platformUuid":"\#(fixture.platform.id.uuidString)"}]}
                """#)
            #expect(ios.status == .ok, "\(String(buffer: ios.body))")
            #expect(try ios.json()["events"] as? Int == 2)

            // The Android SDK (Gson): seconds, null fields left out, a geofence trigger without a receipt.
            let androidAuth = basic(android.id.uuidString.lowercased(), androidSecret, spaces: 2)
            let androidBatch = try await post(
                client, androidAuth,
                #"""
                {"events":[
                  {"receiptId":"\#(receipt)","eventType":"pcf_push_event_type_push_notification_received","eventTime":"\#(nowSeconds)",
                   "deviceUuid":"3f1e","sdkVersion":"1.8.0","platformType":"android","platformUuid":"\#(android.id.uuidString.lowercased())"},
                  {"eventType":"pcf_push_event_type_geofence_location_triggered","eventTime":"\#(nowSeconds)","deviceUuid":"3f1e",
                   "geofenceId":"12","locationId":"4","sdkVersion":"1.8.0","platformType":"android"},
                  {"receiptId":"\#(receipt)","eventType":"pcf_push_event_type_heartbeat","eventTime":"\#(nowSeconds)","deviceUuid":"3f1e"}]}
                """#)
            #expect(androidBatch.status == .ok, "\(String(buffer: androidBatch.body))")

            let status = try await client.execute(uri: "/v1/push/\(receipt)", method: .get, headers: appAuth(fixture)).json()
            #expect(status["received"] as? Int == 2)
            #expect(status["opened"] as? Int == 1)
            #expect(status["geofence_triggers"] as? Int == 0)

            // Both times fall in the same hour of the series, normalised to milliseconds.
            let hour: Int64 = 3_600_000
            let summary = try await client.execute(
                uri: "/v1/analytics/summary?interval=hour&from=\(nowMillis - hour)&to=\(nowMillis + 1)", method: .get,
                headers: appAuth(fixture)
            ).json()
            #expect(summary["interval"] as? String == "hour")
            let buckets = try #require(summary["buckets"] as? [[String: Any]])
            #expect(buckets.count == 2)
            let current = try #require(buckets.last)
            #expect(current["start"] as? Int64 == nowMillis - nowMillis % hour)
            #expect(current["received"] as? Int == 2 && current["opened"] as? Int == 1)
            #expect(current["geofence_triggered"] as? Int == 1 && current["heartbeats"] as? Int == 1)
            #expect(buckets.first?["received"] as? Int == 0)
            let daily = try await client.execute(uri: "/v1/analytics/summary?interval=day", method: .get, headers: appAuth(fixture)).json()
            #expect((daily["buckets"] as? [[String: Any]])?.last?["received"] as? Int == 2)
        }
    }

    @Test(arguments: Backend.available)
    func aBatchWithOneBadEventIsRefusedWhole(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let good = #"{"eventType":"pcf_push_event_type_push_notification_received","eventTime":"1700000000000","receiptId":"r"}"#
            let bad = #"{"eventType":"pcf_push_event_type_push_notification_opened","eventTime":"tuesday"}"#
            let response = try await post(client, basic(fixture), #"{"events":[\#(good),\#(good),\#(good),\#(bad)]}"#)
            #expect(response.status == .badRequest)
            #expect(try response.error()["field"] as? String == "events[3].eventTime")
            #expect(try await harness.store.analytics.eventCount(applicationID: fixture.app.id) == 0)

            for (json, field) in [("{}", "events"), (#"{"events":{}}"#, "events"), (#"{"events":[1]}"#, "events[0]")] {
                let refused = try await post(client, basic(fixture), json)
                #expect(refused.status == .badRequest, "\(json)")
                #expect(try refused.error()["field"] as? String == field, "\(json)")
            }
            // Unknown types are stored, not refused.
            let unknown = try await post(
                client, basic(fixture), #"{"events":[{"eventType":"pcf_push_event_type_future","eventTime":"1700000000"}]}"#)
            #expect(unknown.status == .ok)
            #expect(try await harness.store.analytics.eventCount(applicationID: fixture.app.id) == 1)
            // Devices post with platform credentials only.
            #expect(try await post(client, appAuth(fixture), #"{"events":[]}"#).status == .unauthorized)
        }
    }

    @Test(arguments: Backend.available)
    func geofenceTriggersAreCountedPerGeofenceAndTheSummaryChecksItsQuery(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let place = try await harness.store.locations.create(
                applicationID: fixture.app.id, LocationChanges(name: "p", latitude: 1, longitude: 2, radius: 30))
            let fence = try await harness.store.geofences.create(
                applicationID: fixture.app.id,
                GeofenceChanges(
                    platform: .ios, triggerType: .enter, expiryTime: EpochClock.system.now.epochMilliseconds + 86_400_000,
                    data: ["ios": .object([:])],
                    locationIDs: [place.id]),
                notify: GeofenceUpdatePolicy())
            let trigger =
                #"{"eventType":"pcf_push_event_type_geofence_location_triggered","eventTime":"\#(EpochClock.system.now.epochMilliseconds)","geofenceId":"\#(fence.id)","locationId":"\#(place.id)"}"#
            #expect(try await post(client, basic(fixture), #"{"events":[\#(trigger),\#(trigger)]}"#).status == .ok)
            let read = try await client.execute(uri: "/v1/geofence/\(fence.id)", method: .get, headers: appAuth(fixture)).json()
            #expect(read["triggered"] as? Int == 2)

            let refusals: [(String, String)] = [("interval=week", "interval"), ("from=abc", "from"), ("to=-1", "to")]
            for (query, field) in refusals {
                let response = try await client.execute(uri: "/v1/analytics/summary?\(query)", method: .get, headers: appAuth(fixture))
                #expect(response.status == .badRequest, "\(query)")
                #expect(try response.error()["field"] as? String == field, "\(query)")
            }
            // A reversed range is empty; a range of more than 2000 buckets is its last 2000.
            let reversed = try await client.execute(uri: "/v1/analytics/summary?from=10&to=5", method: .get, headers: appAuth(fixture))
            #expect(reversed.status == .ok)
            #expect((try reversed.json()["buckets"] as? [Any])?.isEmpty == true)
            let to = EpochClock.system.now.epochMilliseconds
            let long = try await client.execute(
                uri: "/v1/analytics/summary?interval=hour&from=0&to=\(to)", method: .get, headers: appAuth(fixture)
            ).json()
            #expect((long["buckets"] as? [Any])?.count == 2000)
            #expect(long["from"] as? Int == Int(to - 1) / 3_600_000 * 3_600_000 - 1999 * 3_600_000)
            #expect(try await client.execute(uri: "/v1/analytics/summary", method: .get, headers: basic(fixture)).status == .unauthorized)
        }
    }
}
