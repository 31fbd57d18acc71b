import Foundation
import HeraldCore
import Testing

@Suite struct AnalyticsInputTests {
    func batch(_ json: String) throws -> AnalyticsBatchInput {
        try JSONDecoder().decode(AnalyticsBatchInput.self, from: Data(json.utf8))
    }

    @Test func readsBothSDKsAndNormalisesTheirTimes() throws {
        // The iOS SDK: milliseconds, every field present.
        let ios = try batch(
            #"""
            {"events":[{"receiptId":"9D1A0C6E-7F52-4D7C-9C53-3C1E1B2A0F11","eventType":"pcf_push_event_type_push_notification_received",
              "eventTime":"1700000000123","deviceUuid":"d1","geofenceId":null,"locationId":null,"sdkVersion":"1.6.0",
              "platformType":"ios","platformUuid":"p1"}]}
            """#
        ).validated()
        #expect(ios[0].time == 1_700_000_000_123)
        #expect(ios[0].receiptID == "9d1a0c6e-7f52-4d7c-9c53-3c1e1b2a0f11")
        #expect(ios[0].platformType == "ios")
        // The Android SDK: seconds, absent fields left out (Gson), a geofence trigger.
        let android = try batch(
            #"""
            {"events":[{"eventType":"pcf_push_event_type_geofence_location_triggered","eventTime":"1700000000",
              "deviceUuid":"d2","geofenceId":"5","locationId":"88","sdkVersion":"1.8.0","platformType":"android"}]}
            """#
        ).validated()
        #expect(android[0].time == 1_700_000_000_000)
        #expect(android[0].geofenceID == "5" && android[0].receiptID == nil)
        #expect(android[0].hour == 1_699_999_200_000)
        // An unknown type is kept as it is.
        #expect(try batch(#"{"events":[{"eventType":"custom_thing","eventTime":"1"}]}"#).validated()[0].type == "custom_thing")
    }

    @Test func aBadEventIsNamedByItsPlace() throws {
        let good = #"{"eventType":"x","eventTime":"1700000000"}"#
        let cases: [(String, String, String)] = [
            (#"{"eventTime":"1700000000"}"#, "events[3].eventType", "missing_field"),
            (#"{"eventType":"x"}"#, "events[3].eventTime", "missing_field"),
            (#"{"eventType":"x","eventTime":"yesterday"}"#, "events[3].eventTime", "invalid_field"),
            (#"{"eventType":"x","eventTime":"-5"}"#, "events[3].eventTime", "invalid_field"),
            (#"{"eventType":"x","eventTime":"1","receiptId":{"a":1}}"#, "events[3].receiptId", "invalid_type"),
            (#"{"eventType":true,"eventTime":"1"}"#, "events[3].eventType", "invalid_type"),
            (#""text""#, "events[3]", "invalid_type"),
        ]
        for (bad, field, code) in cases {
            let json = #"{"events":[\#(good),\#(good),\#(good),\#(bad)]}"#
            let error = #expect(throws: ValidationError.self, "\(bad)") { try batch(json).validated() }
            #expect(error?.field == field, "\(bad)")
            #expect(error?.code == code, "\(bad)")
        }
    }
}
