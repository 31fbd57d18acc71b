extension QuietTime {
    /// A quiet time from its minutes after midnight; nil unless both are 0–1439 and differ.
    package init?(startMinute: Int, endMinute: Int) {
        guard (0..<1440).contains(startMinute), (0..<1440).contains(endMinute), startMinute != endMinute else { return nil }
        self.start = startMinute
        self.end = endMinute
    }

    /// As the store keeps it: `22:00-07:00`.
    package var stored: String { "\(startText)-\(endText)" }

    /// Reads the stored form (`stored`); nil for anything else.
    package init?(stored: String) {
        let parts = stored.split(separator: "-")
        guard parts.count == 2, let quiet = try? QuietTime(start: String(parts[0]), end: String(parts[1]), field: "quiet_time")
        else { return nil }
        self = quiet
    }

    /// `HH:MM` of the start and of the end.
    package var startText: String { Self.text(start) }
    package var endText: String { Self.text(end) }

    /// As the API shows it: `{"start": "22:00", "end": "07:00"}`.
    package var json: JSONValue { .object(["start": .string(startText), "end": .string(endText)]) }

    /// A quiet time as an API body gives it (`{"start": "22:00", "end": "07:00"}`): absent leaves
    /// it as it is, null removes it. Errors name `field` and its members.
    package static func change(_ value: JSONValue?, field: String) throws(ValidationError) -> FieldChange<QuietTime> {
        switch value {
        case nil: return .unchanged
        case .null?: return .clear
        case .object(let members)?:
            for key in members.keys.sorted() where key != "start" && key != "end" {
                throw ValidationError(message: "'\(key)' is not a member of a quiet time: start and end", field: "\(field).\(key)")
            }
            func time(_ key: String) throws(ValidationError) -> String {
                guard let member = members[key], member != .null else {
                    throw ValidationError(code: "missing_field", message: "\(key) is required, as HH:MM", field: "\(field).\(key)")
                }
                guard let text = member.stringValue else {
                    throw ValidationError(code: "invalid_type", message: "must be a time of day as HH:MM", field: "\(field).\(key)")
                }
                return text
            }
            return .set(try QuietTime(start: try time("start"), end: try time("end"), field: field))
        default:
            throw ValidationError(
                code: "invalid_type", message: "must be an object {\"start\": \"HH:MM\", \"end\": \"HH:MM\"}, or null", field: field)
        }
    }

    private static func text(_ minutes: Int) -> String {
        let hour = minutes / 60
        let minute = minutes % 60
        return (hour < 10 ? "0\(hour)" : "\(hour)") + ":" + (minute < 10 ? "0\(minute)" : "\(minute)")
    }
}
