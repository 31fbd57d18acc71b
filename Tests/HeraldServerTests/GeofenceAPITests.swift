import Foundation
import HeraldCore
import HeraldServer
import HeraldStore
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `/v1/locations`, `/v1/location_groups`, `/v1/geofence` and the device fetch `/v1/geofences`.
@Suite struct GeofenceAPITests {
    let expiry: Int64 = 4_102_444_800_000  // 2100-01-01

    func send(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ headers: HTTPFields, _ json: String? = nil
    ) async throws -> TestResponse {
        try await client.execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }

    func location(_ client: any TestClientProtocol, _ fixture: Fixture, _ json: String) async throws -> Int {
        let response = try await send(client, .post, "/v1/locations", appAuth(fixture), json)
        #expect(response.status == .created, "\(String(buffer: response.body))")
        return try #require(try response.json()["id"] as? Int)
    }

    func geofenceJSON(locations: [Int], tags: [String] = [], platform: String = "ios") -> String {
        let ids = locations.map { "\"\($0)\"" }.joined(separator: ",")
        let tagList = tags.map { "\"\($0)\"" }.joined(separator: ",")
        return #"""
            {"tags":[\#(tagList)],"locations":[\#(ids)],"trigger_type":"enter","start_time":0,"expiry_time":\#(expiry),
             "platform":"\#(platform)","data":{"ios":{"alertBody":"Welcome","hasAction":false,"applicationBadgeNumber":0,
             "userInfo":{"shop":"7"}},"android":{"message":"Welcome","badge":1}}}
            """#
    }

    @Test(arguments: Backend.available)
    func locationsAreCreatedPagedUpdatedAndDeleted(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            // The seed's body: coordinates as strings.
            let created = try await send(
                client, .post, "/v1/locations", appAuth(fixture), #"{"name":"sample","lat":"0.0","long":"0.0","rad":100}"#)
            #expect(created.status == .created)
            let sample = try created.json()
            #expect(sample["lat"] as? String == "0.0" && sample["long"] as? String == "0.0" && sample["rad"] as? Int == 100)
            #expect(sample["created_at"] as? Int64 != nil && sample["updated_at"] as? Int64 != nil)
            let id = try #require(sample["id"] as? Int)
            // Numbers work as well.
            _ = try await location(client, fixture, #"{"name":"Office","lat":49.2827,"long":-123.1207,"rad":25.5}"#)

            let list = try await send(client, .get, "/v1/locations", appAuth(fixture)).json()
            #expect(list["totalLocations"] as? Int == 2 && list["totalPages"] as? Int == 1 && list["page"] as? Int == 1)
            #expect(list["size"] as? Int == 25)
            let office = try #require((list["locations"] as? [[String: Any]])?.last)
            #expect(office["lat"] as? String == "49.2827" && office["long"] as? String == "-123.1207" && office["rad"] as? Double == 25.5)
            let second = try await send(client, .get, "/v1/locations?size=1&page=2", appAuth(fixture)).json()
            #expect((second["locations"] as? [[String: Any]])?.first?["name"] as? String == "Office")
            #expect(second["totalPages"] as? Int == 2)
            let search = try await send(client, .get, "/v1/locations?q=OFF", appAuth(fixture)).json()
            #expect(search["totalLocations"] as? Int == 1)
            let since = try await send(
                client, .get, "/v1/locations?timestamp=\(EpochClock.system.now.epochMilliseconds + 1000)", appAuth(fixture)
            ).json()
            #expect(since["totalLocations"] as? Int == 0)

            let updated = try await send(client, .put, "/v1/locations/\(id)", appAuth(fixture), #"{"rad":"150","name":"renamed"}"#)
            #expect(updated.status == .ok)
            #expect(try updated.json()["rad"] as? Int == 150 && updated.json()["name"] as? String == "renamed")
            #expect(try updated.json()["lat"] as? String == "0.0")
            let read = try await send(client, .get, "/v1/locations/\(id)", appAuth(fixture))
            #expect(try read.json()["name"] as? String == "renamed")

            #expect(try await send(client, .delete, "/v1/locations/\(id)", appAuth(fixture)).status == .noContent)
            #expect(try await send(client, .get, "/v1/locations/\(id)", appAuth(fixture)).status == .notFound)
            #expect(try await send(client, .delete, "/v1/locations/\(id)", appAuth(fixture)).status == .notFound)
        }
    }

    @Test(arguments: Backend.available)
    func locationGroupsHoldLocationsOfTheApp(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let one = try await location(client, fixture, #"{"name":"one","lat":"1","long":"1","rad":10}"#)
            let two = try await location(client, fixture, #"{"name":"two","lat":"2","long":"2","rad":20}"#)
            let created = try await send(
                client, .post, "/v1/location_groups", appAuth(fixture),
                #"{"name":"sample group","location_ids":[\#(two),"\#(one)"],"description":"a sample location group"}"#)
            #expect(created.status == .created)
            let group = try created.json()
            let id = try #require(group["id"] as? Int)
            let members = try #require(group["locations"] as? [[String: Any]])
            #expect(members.map { $0["id"] as? Int } == [two, one])
            // The seed shows a group's locations with camel-case times; both spellings are there.
            #expect(members[0]["createdAt"] as? Int64 != nil && members[0]["created_at"] as? Int64 != nil)

            let unknown = try await send(
                client, .post, "/v1/location_groups", appAuth(fixture), #"{"name":"bad","location_ids":[\#(one), 999999]}"#)
            #expect(unknown.status == .conflict)
            #expect(try unknown.error()["field"] as? String == "location_ids[1]")
            #expect(try unknown.error()["code"] as? String == "unknown_location")

            let list = try await send(client, .get, "/v1/location_groups?q=sample", appAuth(fixture)).json()
            #expect(list["totalLocationGroups"] as? Int == 1 && (list["location_groups"] as? [Any])?.count == 1)
            let put = try await send(client, .put, "/v1/location_groups/\(id)", appAuth(fixture), #"{"location_ids":[\#(one)]}"#)
            #expect((try put.json()["locations"] as? [[String: Any]])?.map { $0["id"] as? Int } == [one])
            #expect(try put.json()["description"] as? String == "a sample location group")
            #expect(try await send(client, .delete, "/v1/location_groups/\(id)", appAuth(fixture)).status == .noContent)
            #expect(try await send(client, .get, "/v1/location_groups/\(id)", appAuth(fixture)).status == .notFound)
            // The locations stay.
            #expect(try await send(client, .get, "/v1/locations/\(one)", appAuth(fixture)).status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func geofencesFollowTheSeedsShapes(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let place = try await location(client, fixture, #"{"name":"sample","lat":"0.0","long":"0.0","rad":100}"#)
            let created = try await send(
                client, .post, "/v1/geofence", appAuth(fixture), geofenceJSON(locations: [place], tags: ["Tag1"], platform: "all"))
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let geofence = try created.json()
            let id = try #require(geofence["id"] as? Int)
            #expect(geofence["tags"] as? [String] == ["tag1"])
            #expect(geofence["trigger_type"] as? String == "enter" && geofence["platform"] as? String == "all")
            #expect(geofence["expiry_time"] as? Int64 == expiry && geofence["start_time"] as? Int64 == 0)
            #expect((geofence["locations"] as? [[String: Any]])?.first?["name"] as? String == "sample")
            #expect(((geofence["data"] as? [String: Any])?["ios"] as? [String: Any])?["alertBody"] as? String == "Welcome")

            let list = try await send(client, .get, "/v1/geofence?page=1&size=10", appAuth(fixture)).json()
            #expect(list["totalGeofences"] as? Int == 1 && list["totalPages"] as? Int == 1 && list["size"] as? Int == 10)
            let createdAt = try #require(geofence["updated_at"] as? Int64)
            let unchanged = try await send(client, .get, "/v1/geofence?timestamp=\(createdAt)", appAuth(fixture)).json()
            #expect(unchanged["totalGeofences"] as? Int == 0)

            // The seed's PUT: no platform or start time, which are kept.
            let put = try await send(
                client, .put, "/v1/geofence/\(id)", appAuth(fixture),
                #"{"trigger_type":"exit","expiry_time":\#(expiry),"data":{"ios":{"alertBody":"Bye"},"android":{"message":"Bye"}},"tags":["tag2"],"locations":[\#(place)]}"#
            )
            #expect(put.status == .ok, "\(String(buffer: put.body))")
            #expect(try put.json()["trigger_type"] as? String == "exit" && put.json()["platform"] as? String == "all")
            #expect(try put.json()["tags"] as? [String] == ["tag2"])

            let inUse = try await send(client, .delete, "/v1/locations/\(place)", appAuth(fixture))
            #expect(inUse.status == .conflict)
            #expect(try inUse.error()["code"] as? String == "location_in_use")

            #expect(try await send(client, .get, "/v1/geofence/\(id)", appAuth(fixture)).json()["triggered"] as? Int == 0)
            #expect(try await send(client, .delete, "/v1/geofence/\(id)", appAuth(fixture)).status == .noContent)
            #expect(try await send(client, .get, "/v1/geofence/\(id)", appAuth(fixture)).status == .notFound)
            #expect(try await send(client, .put, "/v1/geofence/\(id)", appAuth(fixture), #"{"tags":[]}"#).status == .notFound)
            #expect(try await send(client, .get, "/v1/geofence", appAuth(fixture)).json()["totalGeofences"] as? Int == 0)
            #expect(try await send(client, .delete, "/v1/locations/\(place)", appAuth(fixture)).status == .noContent)
        }
    }

    @Test(arguments: Backend.available)
    func badRequestsAre400sNamingTheField(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let place = try await location(client, fixture, #"{"name":"p","lat":"1","long":"1","rad":10}"#)
            let cases: [(String, String, String?, String)] = [
                ("/v1/locations", #"{"name":"x","lat":"91","long":"0","rad":1}"#, "lat", "invalid_field"),
                ("/v1/locations", #"{"name":"x","lat":"0","long":"0","rad":0}"#, "rad", "invalid_field"),
                ("/v1/locations", #"{"name":"x","lat":[],"long":"0","rad":1}"#, "lat", "invalid_type"),
                ("/v1/locations", #"{"name":5,"lat":"0","long":"0","rad":1}"#, "name", "invalid_type"),
                ("/v1/locations", "{", nil, "invalid_json"),
                ("/v1/location_groups", #"{"name":"g","location_ids":"1"}"#, "location_ids", "invalid_type"),
                ("/v1/geofence", geofenceJSON(locations: [999_999]), "locations[0]", "unknown_location"),
                (
                    "/v1/geofence", geofenceJSON(locations: [place]).replacingOccurrences(of: "\"enter\"", with: "\"inside\""),
                    "trigger_type", "invalid_field"
                ),
                ("/v1/geofence", geofenceJSON(locations: [place], platform: "web"), "platform", "invalid_field"),
                (
                    "/v1/geofence",
                    geofenceJSON(locations: [place]).replacingOccurrences(of: "\"start_time\":0", with: "\"start_time\":\(expiry + 1)"),
                    "expiry_time", "invalid_range"
                ),
                (
                    "/v1/geofence", geofenceJSON(locations: [place]).replacingOccurrences(of: "\"tags\":[]", with: "\"tags\":\"a\""),
                    "tags", "invalid_type"
                ),
            ]
            for (uri, json, field, code) in cases {
                let response = try await send(client, .post, uri, appAuth(fixture), json)
                // Well formed, but in conflict with the stored locations or with itself: 409.
                let conflict = ["unknown_location", "invalid_range"].contains(code)
                #expect(response.status == (conflict ? .conflict : .badRequest), "\(uri) \(json.prefix(80))")
                #expect(try response.error()["field"] as? String == field, "\(uri) \(json.prefix(80))")
                #expect(try response.error()["code"] as? String == code, "\(uri) \(json.prefix(80))")
            }
            #expect(try await send(client, .get, "/v1/geofence?size=5000", appAuth(fixture)).error()["field"] as? String == "size")
            #expect(try await send(client, .get, "/v1/locations?timestamp=x", appAuth(fixture)).error()["field"] as? String == "timestamp")
            #expect(try await send(client, .get, "/v1/geofence", appAuth(fixture)).json()["totalGeofences"] as? Int == 0)
        }
    }

    @Test(arguments: Backend.available)
    func anotherApplicationSeesNothing(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let owner = try await Fixture.make(harness.store)
            let stranger = try await Fixture.make(harness.store)
            let place = try await location(client, owner, #"{"name":"p","lat":"1","long":"1","rad":10}"#)
            let group = try await send(client, .post, "/v1/location_groups", appAuth(owner), #"{"name":"g","location_ids":[\#(place)]}"#)
            let groupID = try #require(try group.json()["id"] as? Int)
            let fence = try await send(client, .post, "/v1/geofence", appAuth(owner), geofenceJSON(locations: [place]))
            let fenceID = try #require(try fence.json()["id"] as? Int)

            for uri in ["/v1/locations/\(place)", "/v1/location_groups/\(groupID)", "/v1/geofence/\(fenceID)"] {
                #expect(try await send(client, .get, uri, appAuth(stranger)).status == .notFound, "\(uri)")
                #expect(try await send(client, .put, uri, appAuth(stranger), #"{"name":"mine"}"#).status != .ok, "\(uri)")
                #expect(try await send(client, .delete, uri, appAuth(stranger)).status == .notFound, "\(uri)")
                #expect(try await send(client, .get, uri, basic(owner)).status == .unauthorized, "\(uri)")
            }
            // Nor can it use the owner's locations.
            let borrowed = try await send(client, .post, "/v1/geofence", appAuth(stranger), geofenceJSON(locations: [place]))
            #expect(borrowed.status == .conflict)
            #expect(try borrowed.error()["code"] as? String == "unknown_location")
            for uri in ["/v1/locations", "/v1/location_groups", "/v1/geofence"] {
                let list = try await send(client, .get, uri, appAuth(stranger)).json()
                #expect(list["totalPages"] as? Int == 0, "\(uri)")
            }
            #expect(try await send(client, .get, "/v1/geofence/\(fenceID)", appAuth(owner)).status == .ok)
        }
    }

    @Test(arguments: Backend.available)
    func devicesFetchTheirGeofencesAsTheSDKsRead(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let (android, androidSecret) = try await harness.store.platforms.create(
                applicationID: fixture.app.id, name: "android", type: .android, credentials: try Fixture.credentials(for: .android))
            let iosDevice =
                try await send(
                    client, .post, "/v1/registration", basic(fixture, spaces: 2),
                    #"{"registration_token":"\#(randomAPNsToken())","os":"ios","tags":["news"]}"#
                ).json()["device_uuid"] as? String
            let androidAuth = basic(android.id.uuidString.lowercased(), androidSecret, spaces: 2)
            let androidDevice =
                try await send(
                    client, .post, "/v1/registration", androidAuth,
                    #"{"registration_token":"\#(randomFCMToken())","os":"android-fcm","tags":[]}"#
                ).json()["device_uuid"] as? String
            let iosUUID = try #require(iosDevice)
            let androidUUID = try #require(androidDevice)

            let place = try await location(client, fixture, #"{"name":"shop","lat":"49.5","long":"-123.25","rad":120}"#)
            let both = try #require(
                try await send(client, .post, "/v1/geofence", appAuth(fixture), geofenceJSON(locations: [place], platform: "all")).json()[
                    "id"] as? Int)
            let news = try #require(
                try await send(client, .post, "/v1/geofence", appAuth(fixture), geofenceJSON(locations: [place], tags: ["news"])).json()[
                    "id"] as? Int)

            // The iOS SDK's request.
            let ios = try await send(
                client, .get, "/v1/geofences?timestamp=0&device_uuid=\(iosUUID)&platform=ios", basic(fixture, spaces: 2))
            #expect(ios.status == .ok, "\(String(buffer: ios.body))")
            let iosAnswer = try ios.json()
            #expect(iosAnswer["num"] as? Int == 2)
            #expect(iosAnswer["deleted_geofence_ids"] as? [Int] == [])
            let lastModified = try #require(iosAnswer["last_modified"] as? Int64)
            let fences = try #require(iosAnswer["geofences"] as? [[String: Any]])
            #expect(fences.map { $0["id"] as? Int } == [both, news])
            let data = try #require(fences[0]["data"] as? [String: Any])
            #expect(Set(data.keys) == ["ios"])
            #expect((data["ios"] as? [String: Any])?["alertBody"] as? String == "Welcome")
            let spot = try #require((fences[0]["locations"] as? [[String: Any]])?.first)
            #expect(spot["lat"] as? String == "49.5" && spot["long"] as? String == "-123.25" && spot["rad"] as? Int == 120)

            // The Android FCM SDK's request: its untagged geofence only, data as strings under androidFcm.
            let androidAnswer = try await send(
                client, .get, "/v1/geofences?timestamp=0&device_uuid=\(androidUUID)&platform=android-fcm", androidAuth
            ).json()
            let androidFences = try #require(androidAnswer["geofences"] as? [[String: Any]])
            #expect(androidFences.map { $0["id"] as? Int } == [both])
            let androidData = try #require(androidFences[0]["data"] as? [String: Any])
            #expect(androidData["androidFcm"] as? [String: String] == ["message": "Welcome", "badge": "1"])
            #expect(androidData["android"] as? [String: String] == ["message": "Welcome", "badge": "1"])

            // A deletion reaches the device as an id to drop.
            #expect(try await send(client, .delete, "/v1/geofence/\(news)", appAuth(fixture)).status == .noContent)
            let later = try await send(
                client, .get, "/v1/geofences?timestamp=\(lastModified)&device_uuid=\(iosUUID)&platform=ios", basic(fixture)
            ).json()
            #expect(later["deleted_geofence_ids"] as? [Int] == [news])

            // Wrong requests.
            let mismatch = try await send(client, .get, "/v1/geofences?timestamp=0&device_uuid=\(iosUUID)&platform=android", basic(fixture))
            #expect(mismatch.status == .forbidden)
            #expect(try mismatch.error()["code"] as? String == "platform_mismatch")
            #expect(try await send(client, .get, "/v1/geofences?timestamp=0", basic(fixture)).error()["field"] as? String == "device_uuid")
            #expect(try await send(client, .get, "/v1/geofences?timestamp=-4&device_uuid=\(iosUUID)", basic(fixture)).status == .badRequest)
            // Another platform's device is not found.
            #expect(try await send(client, .get, "/v1/geofences?device_uuid=\(androidUUID)", basic(fixture)).status == .notFound)
            #expect(try await send(client, .get, "/v1/geofences?device_uuid=\(iosUUID)", appAuth(fixture)).status == .unauthorized)
        }
    }

    /// Throws broken requests at every route of this API: none may answer 5xx, and every error
    /// answer is the JSON error shape.
    @Test(arguments: Backend.available)
    func noBrokenRequestMakesTheseRoutesFail(_ backend: Backend) async throws {
        try await ServerHarness.run(backend) { harness, client in
            let fixture = try await Fixture.make(harness.store)
            let place = try await location(client, fixture, #"{"name":"p","lat":"1","long":"1","rad":10}"#)
            let group = try #require(
                try await send(client, .post, "/v1/location_groups", appAuth(fixture), #"{"name":"g"}"#).json()["id"] as? Int)
            let fence = try #require(
                try await send(client, .post, "/v1/geofence", appAuth(fixture), geofenceJSON(locations: [place])).json()["id"] as? Int)
            let device = try #require(
                try await send(client, .post, "/v1/registration", basic(fixture), #"{"registration_token":"abcd"}"#).json()["device_uuid"]
                    as? String)
            let routes: [(HTTPRequest.Method, String)] = [
                (.post, "/v1/locations"), (.get, "/v1/locations?size=%ZZ&page=0&timestamp=-1"), (.put, "/v1/locations/\(place)"),
                (.put, "/v1/locations/abc"), (.delete, "/v1/locations/99999999999999999999"), (.post, "/v1/location_groups"),
                (.put, "/v1/location_groups/\(group)"), (.get, "/v1/location_groups?q=%00"), (.post, "/v1/geofence"),
                (.put, "/v1/geofence/\(fence)"), (.get, "/v1/geofence?timestamp=99999999999999999999&size=-1"),
                (.get, "/v1/geofences?timestamp=9223372036854775807&device_uuid=\(device)&platform=ios"),
                (.get, "/v1/geofences?device_uuid=zz&platform=bb10"), (.post, "/v1/analytics"),
                (.get, "/v1/analytics/summary?from=9223372036854775806&to=9223372036854775807"),
                (.get, "/v1/analytics/summary?interval=day&from=0&to=32503680000000"), (.patch, "/v1/geofence"),
            ]
            let bodies: [String?] = [
                nil, "", "{", "null", "[]", "0",
                #"{"name":"a\u0000b","description":"\u0000","lat":"1","long":"1","rad":1}"#,
                #"{"name":"x","lat":"1e400","long":"-0","rad":"1e308","location_ids":[-1,"x",1.5]}"#,
                #"{"tags":["a\u0000"],"locations":[1e300],"trigger_type":"enter","expiry_time":"99999999999999999999","platform":"all","data":{"ios":[],"android":{"a":{"b":[1,null]}}}}"#,
                #"{"start_time":9223372036854775806,"expiry_time":9223372036854775807}"#,
                #"{"events":[{"eventType":"x\u0000","eventTime":"1"},{"eventType":"y","eventTime":"9223372036854775807"}]}"#,
                #"{"events":[{"eventType":"y","eventTime":"99999999999","geofenceId":"99999999999999999999"}]}"#,
            ]
            let credentials: [HTTPFields] = [basic(fixture), appAuth(fixture), [:]]
            for (method, uri) in routes {
                for payload in bodies {
                    for headers in credentials {
                        let response = try await send(client, method, uri, headers, payload)
                        #expect(response.status.code < 500, "\(method) \(uri) \(payload?.prefix(50) ?? "nil") → \(response.status)")
                        if response.status.code >= 400 {
                            #expect(throws: Never.self, "\(method) \(uri)") { _ = try response.error() }
                        }
                    }
                }
            }
        }
    }
}
