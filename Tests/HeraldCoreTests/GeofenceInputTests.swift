import Foundation
import HeraldCore
import Testing

@Suite struct GeofenceInputTests {
    let now: Int64 = 1_800_000_000_000

    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test func locationCoordinatesAreStringsOrNumbers() throws {
        let seed = try decode(LocationInput.self, #"{"name":"sample","lat":"0.0","long":"-123.1207","rad":100}"#)
        #expect(try seed.validated(requireAll: true) == LocationChanges(name: "sample", latitude: 0, longitude: -123.1207, radius: 100))
        let numbers = try decode(LocationInput.self, #"{"name":" Office ","lat":49.2827,"long":-123,"rad":"25.5"}"#)
        #expect(
            try numbers.validated(requireAll: true) == LocationChanges(name: "Office", latitude: 49.2827, longitude: -123, radius: 25.5))
        // An update may give only some fields.
        #expect(try decode(LocationInput.self, #"{"rad":10}"#).validated(requireAll: false) == LocationChanges(radius: 10))
    }

    @Test func badLocationsNameTheirField() throws {
        let cases: [(String, String, String)] = [
            (#"{"lat":"0","long":"0","rad":1}"#, "name", "missing_field"),
            (#"{"name":"","lat":"0","long":"0","rad":1}"#, "name", "invalid_field"),
            (#"{"name":"x","long":"0","rad":1}"#, "lat", "missing_field"),
            (#"{"name":"x","lat":"90.5","long":"0","rad":1}"#, "lat", "invalid_field"),
            (#"{"name":"x","lat":-91,"long":"0","rad":1}"#, "lat", "invalid_field"),
            (#"{"name":"x","lat":"north","long":"0","rad":1}"#, "lat", "invalid_type"),
            (#"{"name":"x","lat":true,"long":"0","rad":1}"#, "lat", "invalid_type"),
            (#"{"name":"x","lat":"0","long":"180.01","rad":1}"#, "long", "invalid_field"),
            (#"{"name":"x","lat":"0","long":"NaN","rad":1}"#, "long", "invalid_type"),
            (#"{"name":"x","lat":"0","long":"0","rad":0}"#, "rad", "invalid_field"),
            (#"{"name":"x","lat":"0","long":"0","rad":-5}"#, "rad", "invalid_field"),
            (#"{"name":"x","lat":"0","long":"0"}"#, "rad", "missing_field"),
        ]
        for (json, field, code) in cases {
            let error = #expect(throws: ValidationError.self, "\(json)") {
                try decode(LocationInput.self, json).validated(requireAll: true)
            }
            #expect(error?.field == field, "\(json)")
            #expect(error?.code == code, "\(json)")
        }
    }

    @Test func theSeedsGeofenceIsAccepted() throws {
        let input = try decode(
            GeofenceInput.self,
            #"""
            {"tags":["Tag1","tag2","TAG1"],"locations":["1","2",2],"trigger_type":"enter","start_time":0,
             "expiry_time":1900000000000,"platform":"all",
             "data":{"ios":{"alertBody":"Welcome","hasAction":false,"applicationBadgeNumber":0,"userInfo":{"k":"v"}},
                     "android":{"message":"Welcome","count":3}}}
            """#)
        let definition = try input.validated().definition(now: now)
        #expect(definition.tags == ["tag1", "tag2"])
        #expect(definition.locationIDs == [1, 2])
        #expect(definition.platform == .all)
        #expect(definition.triggerType == .enter)
        #expect(definition.startTime == 0)
        // Each SDK gets the keys it reads; Android's as strings.
        var ios = try #require(input.data?.objectValue?["ios"]?.objectValue)
        // The seed's badge key, copied to the one the iOS SDK reads.
        ios["applicationIconBadgeNumber"] = .int(0)
        #expect(definition.deviceData(for: .ios) == ["ios": .object(ios)])
        let android = definition.deviceData(for: .android)
        #expect(android["androidFcm"] == .object(["message": .string("Welcome"), "count": .string("3")]))
        #expect(android["android"] == android["androidFcm"])
    }

    @Test func badGeofencesNameTheirField() throws {
        let base: [String: String] = [
            "locations": "[1]", "trigger_type": "\"exit\"", "expiry_time": "1900000000000", "platform": "\"ios\"",
            "data": #"{"ios":{"alertBody":"x"}}"#,
        ]
        func body(_ changes: [String: String?]) -> String {
            var fields = base
            for (key, value) in changes { fields[key] = value }
            return "{" + fields.sorted(by: { $0.key < $1.key }).map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        }
        let cases: [([String: String?], String, String)] = [
            (["trigger_type": "\"dwell\""], "trigger_type", "invalid_field"),
            (["trigger_type": nil], "trigger_type", "missing_field"),
            (["platform": "\"windows\""], "platform", "invalid_field"),
            (["platform": "\"\""], "platform", "invalid_field"),
            (["platform": nil], "platform", "missing_field"),
            (["locations": "[]"], "locations", "missing_field"),
            (["locations": "[\"one\"]"], "locations[0]", "invalid_type"),
            (["locations": "[1, 0]"], "locations[1]", "invalid_type"),
            (["locations": nil], "locations", "missing_field"),
            (["start_time": "1900000000001"], "expiry_time", "invalid_range"),
            (["start_time": "-1"], "start_time", "invalid_type"),
            (["expiry_time": "1424443201"], "expiry_time", "in_the_past"),
            (["expiry_time": "\"soon\""], "expiry_time", "invalid_type"),
            (["data": "\"x\""], "data", "invalid_type"),
            (["data": nil], "data", "missing_field"),
            (["data": #"{"android":{"message":"x"}}"#], "data.ios", "missing_field"),
            (["data": #"{"ios":"x"}"#], "data.ios", "invalid_type"),
            (["platform": "\"android\"", "data": #"{"ios":{}}"#], "data.android", "missing_field"),
            (["platform": "\"all\"", "data": #"{"ios":{},"android":{}}"#], "data.android", "missing_field"),
            (["tags": "[\"\"]"], "tags[0]", "invalid_field"),
        ]
        for (changes, field, code) in cases {
            let json = body(changes)
            let error = #expect(throws: ValidationError.self, "\(json)") {
                try decode(GeofenceInput.self, json).validated().definition(now: now)
            }
            #expect(error?.field == field, "\(json)")
            #expect(error?.code == code, "\(json)")
        }
        // Seconds instead of milliseconds get a hint.
        let seconds = #expect(throws: ValidationError.self) {
            try decode(GeofenceInput.self, body(["expiry_time": "1900000000"])).validated().definition(now: now)
        }
        #expect(seconds?.message.contains("seconds") == true)
    }

    @Test func anUpdateIsCheckedAgainstTheStoredGeofence() throws {
        let stored = GeofenceDefinition(
            platform: .ios, triggerType: .enter, startTime: 0, expiryTime: now + 1000, data: ["ios": .object([:])], tags: [],
            locationIDs: [1])
        // The seed's PUT gives no platform or start time: they are kept.
        let put = try decode(GeofenceInput.self, #"{"trigger_type":"exit","expiry_time":1900000000000,"tags":["a"],"locations":[2]}"#)
        let updated = try put.validated().applied(to: stored, now: now)
        #expect(updated.triggerType == .exit && updated.platform == .ios && updated.tags == ["a"] && updated.locationIDs == [2])
        // Moving to Android needs Android data.
        let error = #expect(throws: ValidationError.self) {
            try decode(GeofenceInput.self, #"{"platform":"android"}"#).validated().applied(to: stored, now: now)
        }
        #expect(error?.field == "data.android")
        // An expired geofence may still be retagged without extending it.
        var expired = stored
        expired.expiryTime = now - 1
        #expect(try decode(GeofenceInput.self, #"{"tags":["b"]}"#).validated().applied(to: expired, now: now).tags == ["b"])
    }

    @Test func audiencesWidenWhenMerged() {
        let tagged = GeofenceAudience(platforms: [.ios], topics: ["a"], everyone: false)
        let other = GeofenceAudience(platforms: [.android], topics: ["b"], everyone: false)
        #expect(tagged.union(other) == GeofenceAudience(platforms: [.ios, .android], topics: ["a", "b"], everyone: false))
        let untagged = GeofenceAudience(platforms: [.ios], topics: [], everyone: true)
        #expect(tagged.union(untagged) == GeofenceAudience(platforms: [.ios], topics: [], everyone: true))
    }

    @Test func theUpdatePushIsSilentOnIOSAndDataOnlyOnAndroid() throws {
        let push = GeofenceUpdatePush.push(for: GeofenceAudience(platforms: [.ios, .android], topics: ["b", "a"], everyone: false))
        // It passes the checks a push sent through the API does, for every provider.
        try push.checkRenderable(now: now)
        #expect(push.audience == .selection(platforms: [.ios, .android], topics: ["a", "b"], customUserIDs: [], interactiveOnly: false))
        let apns = try #require(try APNsRenderer.render(push, receiptID: "r"))
        #expect(apns.pushType == .background)
        #expect(apns.priority == 5)
        let payload = try #require(try JSONSerialization.jsonObject(with: Data(apns.payload)) as? [String: Any])
        #expect(payload[GeofenceUpdatePush.key] as? Bool == true)
        #expect((payload["aps"] as? [String: Any])?["content-available"] as? Int == 1)
        let fcm = try #require(try FCMRenderer.render(push, receiptID: "r", now: now))
        #expect(fcm.notification == nil)
        #expect(fcm.data[GeofenceUpdatePush.key] == "true")
        let everyone = GeofenceUpdatePush.push(for: GeofenceAudience(platforms: [.ios], topics: [], everyone: true))
        #expect(everyone.audience == .selection(platforms: [.ios], topics: [], customUserIDs: [], interactiveOnly: false))
    }
}
