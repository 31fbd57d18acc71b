/// A registration that passed validation for one platform, ready for the store.
package struct Registration: Sendable, Equatable {
    /// The os as the device named it, lower case (`ios`, `android`, `android-fcm`, `windows8`, `web`).
    package var os: String?
    /// The normalised token; nil when a `PUT` does not change it.
    package var registrationToken: String?
    package var osVersion: FieldChange<String>
    package var deviceAlias: FieldChange<String>
    package var deviceModel: FieldChange<String>
    package var deviceManufacturer: FieldChange<String>
    package var customUserID: FieldChange<String>
    /// Tags lower-cased, without duplicates.
    package var tags: TagsChange
    /// The device's IANA time zone (for local-time pushes), checked.
    package var timeZone: FieldChange<String>

    package init(
        os: String?, registrationToken: String?, osVersion: FieldChange<String>, deviceAlias: FieldChange<String>,
        deviceModel: FieldChange<String>, deviceManufacturer: FieldChange<String>, customUserID: FieldChange<String>,
        tags: TagsChange, timeZone: FieldChange<String> = .unchanged
    ) {
        self.os = os
        self.registrationToken = registrationToken
        self.osVersion = osVersion
        self.deviceAlias = deviceAlias
        self.deviceModel = deviceModel
        self.deviceManufacturer = deviceManufacturer
        self.customUserID = customUserID
        self.tags = tags
        self.timeZone = timeZone
    }
}

extension RegistrationInput {
    /// Checks the input for a device of a platform of `type`.
    ///
    /// - Parameter requireToken: true for a new registration (`POST`).
    package func validated(for type: PlatformType, requireToken: Bool) throws(ValidationError) -> Registration {
        var os: String?
        if let raw = self.os, !raw.isEmpty {
            let lowered = raw.lowercased()
            let declared: PlatformType
            if lowered == "android-baidu" {
                throw ValidationError(
                    code: "platform_unsupported",
                    message: "Baidu Cloud Push is not supported; register Android devices through FCM (os 'android-fcm')",
                    field: "os")
            } else if lowered == "android-fcm" {
                declared = .android
            } else {
                declared = try PlatformType.parse(raw, field: "os")
            }
            guard declared == type else {
                throw ValidationError(
                    code: "platform_mismatch",
                    message: "os '\(raw)' does not match this platform, which is of type '\(type.rawValue)'",
                    field: "os")
            }
            os = lowered
        }

        var token: String?
        if let raw = registrationToken {
            token = try RegistrationToken.normalize(raw, for: type)
        } else if requireToken {
            throw ValidationError(code: "missing_field", message: "registration_token is required", field: "registration_token")
        }

        func text(_ change: FieldChange<String>, _ field: String, limit: Int = Limits.deviceFieldLength) throws(ValidationError)
            -> FieldChange<String>
        {
            if case .set(let value) = change {
                guard value.unicodeScalars.count <= limit else {
                    throw ValidationError(message: "is longer than \(limit) characters", field: field)
                }
                try value.requireStorable(field: field)
            }
            return change
        }

        return Registration(
            os: os,
            registrationToken: token,
            osVersion: try text(osVersion, "os_version"),
            deviceAlias: try text(deviceAlias, "device_alias"),
            deviceModel: try text(deviceModel, "device_model"),
            deviceManufacturer: try text(deviceManufacturer, "device_manufacturer"),
            customUserID: try text(customUserID, "custom_user_id", limit: Limits.customUserIDLength),
            tags: try Self.validatedTags(tags))
    }

    static func validatedTags(_ change: TagsChange) throws(ValidationError) -> TagsChange {
        switch change {
        case .unchanged:
            return .unchanged
        case .replace(let tags):
            return .replace(try normalizedTags(tags, field: "tags"))
        case .delta(let subscribe, let unsubscribe):
            return .delta(
                subscribe: try normalizedTags(subscribe, field: "tags.subscribe"),
                unsubscribe: try normalizedTags(unsubscribe, field: "tags.unsubscribe"))
        }
    }

    /// Lower-cases, removes duplicates and checks count and length.
    package static func normalizedTags(_ tags: [String], field: String) throws(ValidationError) -> [String] {
        guard tags.count <= Limits.tagsPerDevice else {
            throw ValidationError(
                code: "limit_exceeded", message: "at most \(Limits.tagsPerDevice) tags, got \(tags.count)", field: field)
        }
        var seen = Set<String>()
        var out: [String] = []
        for (index, tag) in tags.enumerated() {
            let lowered = try normalizedTag(tag, field: "\(field)[\(index)]")
            if seen.insert(lowered).inserted { out.append(lowered) }
        }
        return out
    }

    /// One tag (a topic), lower-cased and checked: not empty, storable, not too long.
    package static func normalizedTag(_ tag: String, field: String) throws(ValidationError) -> String {
        let lowered = tag.lowercased()
        guard !lowered.isEmpty else {
            throw ValidationError(message: "a tag must not be empty", field: field)
        }
        try lowered.requireStorable(field: field)
        guard tag.unicodeScalars.count <= Limits.tagLength else {
            throw ValidationError(code: "limit_exceeded", message: "a tag is at most \(Limits.tagLength) characters", field: field)
        }
        return lowered
    }
}
