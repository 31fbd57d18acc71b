import struct Foundation.UUID

/// A push that passed validation: what to say, to whom, and until when.
package struct Push: Sendable, Equatable {
    /// `message.body`: the text every platform shows unless its custom block overrides it.
    package var body: String?
    /// `message.custom`, by platform key (`ios`, `android`, `web`, `windows8`, `windowsPhone`).
    package var custom: [String: JSONValue]
    package var audience: Audience
    /// `target.audience`: the devices `audience` selects are limited to those it holds for.
    package var audienceExpression: AudienceExpression? = nil
    /// Epoch milliseconds after which nothing is delivered.
    package var expiresAt: Int64?
    /// Epoch milliseconds to send at; nil to send now.
    package var scheduledAt: Int64?
    package var validateOnly: Bool
    /// `scheduleLocal`: send when this wall-clock time comes in each device's time zone.
    package var localTime: LocalDateTime? = nil
    /// `rate.per_second`: at most this many devices a second.
    package var ratePerSecond: Int? = nil
    /// `custom.ios.badge`, typed: a number to show, or a change to each device's count
    /// (autobadge, applied per device at send time; see `PushRepository.badges`).
    package var badge: BadgeChange? = nil
    /// `quiet_time`: what a device's quiet time means for this push (`ignore` unless it says).
    package var quietTime: QuietTimePolicy = .ignore
    /// `schedule`: a recurring schedule's rule. Not part of the stored push: the schedule's row
    /// keeps it, and each occurrence's push is an ordinary one.
    package var recurrence: Recurrence? = nil

    /// The iOS block of `message.custom`.
    package var ios: [String: JSONValue]? { custom["ios"]?.objectValue }
}

/// Which devices a push reaches.
package enum Audience: Sendable, Equatable {
    /// Exactly these devices (`target.devices` overrides every other key).
    case devices([UUID])
    /// Devices subscribed to any of `topics` or registered under any of `customUserIDs` (the
    /// union, one copy per device); with neither, every device. Limited to `platforms` when set.
    case selection(platforms: Set<PlatformType>?, topics: [String], customUserIDs: [String], interactiveOnly: Bool)
}

extension Limits {
    /// Devices one push may name.
    package static let pushDevices = 4096
    /// Topics one push may name.
    package static let pushTopics = 1024
    /// Custom user ids one push may name.
    package static let pushCustomUserIDs = 4096
}

extension PushInput {
    /// Checks the push as the Pivotal API defines it.
    ///
    /// - Parameter now: epoch milliseconds, for `scheduleIn`.
    package func validated(now: Int64) throws(ValidationError) -> Push {
        let body = message?.body
        // Pivotal lists every platform key under `custom`, the unused ones null: null is absent.
        let custom = (message?.custom ?? [:]).filter { $0.value != .null }
        if body == nil && custom.isEmpty {
            throw ValidationError(code: "missing_field", message: "message.body or message.custom is required", field: "message")
        }
        for (key, value) in custom {
            switch key {
            // `windowsPhone` is kept: Windows Phone 8.1 and later apps receive through WNS, and
            // `WNSRenderer` reads the block when there is no `windows8` one. Only MPNS is retired.
            case "ios", "android", "web", "windows8", "windows", "windowsPhone":
                guard value.objectValue != nil else {
                    throw ValidationError(code: "invalid_type", message: "must be an object", field: "message.custom.\(key)")
                }
            case "bb10":
                _ = try PlatformType.parse(key, field: "message.custom.\(key)")
            default:
                break
            }
        }

        // `windows` is `windows8`'s newer name: with both, one would be silently ignored.
        if custom["windows"] != nil && custom["windows8"] != nil {
            throw ValidationError(
                code: "conflicting_fields", message: "give message.custom.windows or windows8 (its older name), not both",
                field: "message.custom.windows")
        }
        guard let target else {
            throw ValidationError(
                code: "missing_field", message: "target is required: devices, topics, platforms, platform, custom_user_ids or audience",
                field: "target")
        }
        let audience = try Self.audience(target)
        let audienceExpression = try target.audienceExpression()
        let badge = try Push.badgeChange(in: custom)

        // Pivotal shows a schedule's push with `"scheduleIn": 0` beside its `scheduleAt`: that
        // pair is the `scheduleAt`, so a push read back from Pivotal can be sent again as it is.
        let scheduleIn = scheduleAt != nil && self.scheduleIn == 0 ? nil : self.scheduleIn
        if scheduleAt != nil && scheduleIn != nil {
            throw ValidationError(code: "conflicting_fields", message: "give scheduleAt or scheduleIn, not both", field: "scheduleIn")
        }
        let extras = try validatedExtras()
        let recurrence = try validatedRecurrence(now: now)
        var scheduledAt = scheduleAt
        if let scheduleIn {
            guard scheduleIn >= 0 else {
                throw ValidationError(message: "scheduleIn is a number of seconds from now, not negative", field: "scheduleIn")
            }
            scheduledAt = now + scheduleIn * 1000
        }
        if let expiryTime, expiryTime < 0 {
            throw ValidationError(message: "expiryTime is epoch milliseconds", field: "expiryTime")
        }
        return Push(
            body: body, custom: custom, audience: audience, audienceExpression: audienceExpression, expiresAt: expiryTime,
            scheduledAt: scheduledAt, validateOnly: validateOnly ?? false, localTime: extras.localTime,
            ratePerSecond: extras.ratePerSecond, badge: badge, quietTime: try Push.quietTimePolicy(quietTime), recurrence: recurrence)
    }

    /// A custom user id a push targets: storable, 1 to `Limits.customUserIDLength` characters.
    static func checkCustomUserID(_ id: String, field: String) throws(ValidationError) {
        try id.requireStorable(field: field)
        guard !id.isEmpty, id.unicodeScalars.count <= Limits.customUserIDLength else {
            throw ValidationError(message: "a custom user id has 1 to \(Limits.customUserIDLength) characters", field: field)
        }
    }

    /// Every field given is checked, even those a device list overrides, so that nothing
    /// refused elsewhere passes unnoticed here.
    static func audience(_ target: Target) throws(ValidationError) -> Audience {
        var platforms: Set<PlatformType>?
        var names = target.platforms ?? []
        if let single = target.platform { names.append(single) }
        var all = false
        for (index, name) in names.enumerated() {
            let field = index < (target.platforms?.count ?? 0) ? "target.platforms[\(index)]" : "target.platform"
            if name.lowercased() == "all" {
                all = true
                continue
            }
            platforms = (platforms ?? []).union([try PlatformType.parse(name, field: field)])
        }
        if all { platforms = Set(PlatformType.allCases) }

        let topics = try RegistrationInput.normalizedTags(target.topics ?? [], field: "target.topics")
        guard topics.count <= Limits.pushTopics else {
            throw ValidationError(code: "limit_exceeded", message: "at most \(Limits.pushTopics) topics", field: "target.topics")
        }
        let customUserIDs = target.customUserIDs ?? []
        guard customUserIDs.count <= Limits.pushCustomUserIDs else {
            throw ValidationError(
                code: "limit_exceeded", message: "at most \(Limits.pushCustomUserIDs) custom user ids, got \(customUserIDs.count)",
                field: "target.custom_user_ids")
        }
        for (index, id) in customUserIDs.enumerated() {
            try id.requireStorable(field: "target.custom_user_ids[\(index)]")
        }
        for (index, id) in customUserIDs.enumerated() {
            try checkCustomUserID(id, field: "target.custom_user_ids[\(index)]")
        }
        if let devices = target.devices, !devices.isEmpty {
            guard devices.count <= Limits.pushDevices else {
                throw ValidationError(
                    code: "limit_exceeded", message: "at most \(Limits.pushDevices) devices, got \(devices.count)", field: "target.devices")
            }
            var seen = Set<UUID>()
            var ids: [UUID] = []
            for (index, raw) in devices.enumerated() {
                guard let id = UUID(text: raw) else {
                    throw ValidationError(message: "'\(raw)' is not a device uuid", field: "target.devices[\(index)]")
                }
                if seen.insert(id).inserted { ids.append(id) }
            }
            return .devices(ids)
        }
        // An audience alone selects among all the app's devices.
        if platforms == nil && topics.isEmpty && customUserIDs.isEmpty && target.audience == nil {
            throw ValidationError(
                code: "missing_field",
                message: "target needs at least one of devices, topics, platforms, platform, custom_user_ids or audience",
                field: "target")
        }
        return .selection(
            platforms: platforms, topics: topics, customUserIDs: Array(Set(customUserIDs)).sorted(),
            interactiveOnly: target.interactiveOnly ?? false)
    }
}
