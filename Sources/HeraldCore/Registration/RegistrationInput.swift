/// A device registration as `POST`/`PUT /v1/registration` receive it, before validation.
///
/// Each field records whether it was present: on a `PUT`, an absent key leaves the stored
/// value as it is, while an empty string clears it (as the PCF SDKs mean it).
package struct RegistrationInput: Sendable, Equatable, Decodable {
    package var os: String?
    package var osVersion: FieldChange<String>
    package var deviceAlias: FieldChange<String>
    package var deviceModel: FieldChange<String>
    package var deviceManufacturer: FieldChange<String>
    package var registrationToken: String?
    package var customUserID: FieldChange<String>
    package var tags: TagsChange
    /// `time_zone`: the device's IANA zone, for `scheduleLocal` pushes (Herald's addition).
    package var timeZone: FieldChange<String> = .unchanged
    /// `badge`: the iOS badge count the app shows now (`0` after it cleared it), as given; the PCF
    /// SDKs never send it, so absent leaves the count as it is (Herald's addition; see
    /// `validatedBadge`).
    package var badge: JSONValue? = nil
    /// `quiet_time`: `{"start": "22:00", "end": "07:00"}` in the device's `time_zone`, `null` to
    /// remove it, absent to keep it (Herald's addition, which the PCF SDKs never send; see
    /// `validatedQuietTime`).
    package var quietTime: JSONValue? = nil

    enum CodingKeys: String, CodingKey {
        case os
        case osVersion = "os_version"
        case deviceAlias = "device_alias"
        case deviceModel = "device_model"
        case deviceManufacturer = "device_manufacturer"
        case registrationToken = "registration_token"
        case customUserID = "custom_user_id"
        case tags
        case timeZone = "time_zone"
        case badge
        case quietTime = "quiet_time"
    }

    package init(
        os: String? = nil, osVersion: FieldChange<String> = .unchanged, deviceAlias: FieldChange<String> = .unchanged,
        deviceModel: FieldChange<String> = .unchanged, deviceManufacturer: FieldChange<String> = .unchanged,
        registrationToken: String? = nil, customUserID: FieldChange<String> = .unchanged, tags: TagsChange = .unchanged
    ) {
        self.os = os
        self.osVersion = osVersion
        self.deviceAlias = deviceAlias
        self.deviceModel = deviceModel
        self.deviceManufacturer = deviceManufacturer
        self.registrationToken = registrationToken
        self.customUserID = customUserID
        self.tags = tags
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func change(_ key: CodingKeys) throws -> FieldChange<String> {
            guard container.contains(key) else { return .unchanged }
            guard let value = try container.decodeIfPresent(String.self, forKey: key), !value.isEmpty else { return .clear }
            return .set(value)
        }
        self.os = try container.decodeIfPresent(String.self, forKey: .os)
        self.osVersion = try change(.osVersion)
        self.deviceAlias = try change(.deviceAlias)
        self.deviceModel = try change(.deviceModel)
        self.deviceManufacturer = try change(.deviceManufacturer)
        self.registrationToken = try container.decodeIfPresent(String.self, forKey: .registrationToken)
        self.customUserID = try change(.customUserID)
        self.tags = try container.decodeIfPresent(TagsChange.self, forKey: .tags) ?? .unchanged
        self.timeZone = try change(.timeZone)
        self.badge = try container.decodeIfPresent(JSONValue.self, forKey: .badge)
        // null (remove it) is told apart from absent (keep it).
        self.quietTime = try container.decodeJSONIfPresent(forKey: .quietTime)
    }
}

/// How a registration changes one optional text field.
package enum FieldChange<Value: Sendable & Equatable>: Sendable, Equatable {
    /// The key was absent: keep what is stored.
    case unchanged
    /// `""` or `null`: remove the value.
    case clear
    case set(Value)

    /// The value after applying the change to `current`.
    package func applied(to current: Value?) -> Value? {
        switch self {
        case .unchanged: current
        case .clear: nil
        case .set(let value): value
        }
    }
}

/// How a registration changes a device's tags: the full list, or a delta.
package enum TagsChange: Sendable, Equatable, Decodable {
    case unchanged
    /// `"tags": ["a","b"]`: the device's tags become exactly these.
    case replace([String])
    /// `"tags": {"subscribe":[…],"unsubscribe":[…]}`.
    case delta(subscribe: [String], unsubscribe: [String])

    enum DeltaKeys: String, CodingKey {
        case subscribe
        case unsubscribe
    }

    package init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .unchanged
            return
        }
        // The list first: it is what clients send, and a failed attempt builds an error value
        // (with its description) only to be thrown away.
        do {
            self = .replace(try single.decode([String].self))
            return
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.count > decoder.codingPath.count {
            throw DecodingError.typeMismatch(String.self, context)
        } catch {
            // Not a list: a delta, or nothing Herald takes.
        }
        guard let keyed = try? decoder.container(keyedBy: DeltaKeys.self) else {
            throw DecodingError.typeMismatch(
                [String].self,
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "tags must be a list of strings or {\"subscribe\":[…],\"unsubscribe\":[…]}"))
        }
        self = .delta(
            subscribe: try keyed.decodeIfPresent([String].self, forKey: .subscribe) ?? [],
            unsubscribe: try keyed.decodeIfPresent([String].self, forKey: .unsubscribe) ?? [])
    }
}
