/// `POST /v1/analytics` as the PCF SDKs send it: `{"events":[{…}, …]}`, every field a string.
///
/// The events are kept as JSON values and checked one by one, so that a bad one is named by its
/// place in the batch (`events[3].eventTime`).
package struct AnalyticsBatchInput: Sendable, Equatable, Decodable {
    package var events: [JSONValue]

    package init(events: [JSONValue]) {
        self.events = events
    }

    /// The events, validated; the first bad one refuses the whole batch.
    package func validated() throws(ValidationError) -> [AnalyticsEvent] {
        guard events.count <= Limits.analyticsEventsPerBatch else {
            throw ValidationError(
                code: "limit_exceeded", message: "at most \(Limits.analyticsEventsPerBatch) events per request, got \(events.count)",
                field: "events")
        }
        var out: [AnalyticsEvent] = []
        out.reserveCapacity(events.count)
        for (index, value) in events.enumerated() {
            out.append(try Self.event(value, field: "events[\(index)]"))
        }
        return out
    }

    static func event(_ value: JSONValue, field: String) throws(ValidationError) -> AnalyticsEvent {
        guard let members = value.objectValue else {
            throw ValidationError(code: "invalid_type", message: "an event must be an object", field: field)
        }
        func text(_ key: String) throws(ValidationError) -> String? {
            switch members[key] {
            case nil, .null?:
                return nil
            case .string(let text)?:
                guard text.unicodeScalars.count <= Limits.analyticsFieldLength else {
                    throw ValidationError(
                        code: "limit_exceeded", message: "\(key) is at most \(Limits.analyticsFieldLength) characters",
                        field: "\(field).\(key)")
                }
                try text.requireStorable(field: "\(field).\(key)")
                return text.isEmpty ? nil : text
            case .int(let number)?:
                // The SDKs send strings; a number is taken as its digits.
                return String(number)
            default:
                throw ValidationError(code: "invalid_type", message: "\(key) must be a string", field: "\(field).\(key)")
            }
        }
        guard let type = try text("eventType") else {
            throw ValidationError(code: "missing_field", message: "eventType is required", field: "\(field).eventType")
        }
        guard let rawTime = try text("eventTime") else {
            throw ValidationError(code: "missing_field", message: "eventTime is required", field: "\(field).eventTime")
        }
        guard let time = Int64(rawTime.trimmingSpaces), time >= 0 else {
            throw ValidationError(
                message: "eventTime must be epoch seconds or milliseconds, a string of digits, not '\(rawTime)'",
                field: "\(field).eventTime")
        }
        return AnalyticsEvent(
            type: type, time: AnalyticsEvent.normalizedTime(time), receiptID: try text("receiptId")?.lowercased(),
            deviceUUID: try text("deviceUuid")?.lowercased(), geofenceID: try text("geofenceId"), locationID: try text("locationId"),
            sdkVersion: try text("sdkVersion"), platformType: try text("platformType")?.lowercased())
    }
}
