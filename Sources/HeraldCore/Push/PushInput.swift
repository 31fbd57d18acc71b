/// `POST /v1/push` as received, before validation (the Pivotal Push API).
package struct PushInput: Sendable, Equatable, Decodable {
    package struct Message: Sendable, Equatable, Decodable {
        package var body: String?
        /// Per platform: `ios`, `android`, `web`, `windows8`, … (free-form, checked per platform).
        package var custom: [String: JSONValue]?

        package init(body: String? = nil, custom: [String: JSONValue]? = nil) {
            self.body = body
            self.custom = custom
        }
    }

    package struct Target: Sendable, Equatable, Decodable {
        package var devices: [String]?
        package var topics: [String]?
        package var platforms: [String]?
        /// Deprecated single platform (`all`, `ios`, …), added to `platforms`.
        package var platform: String?
        package var customUserIDs: [String]?
        package var interactiveOnly: Bool?
        /// An audience expression (Herald's addition), read by `AudienceExpression.parse` when
        /// the push is checked, so that its faults name their JSON path.
        package var audience: JSONValue?

        enum CodingKeys: String, CodingKey {
            case devices, topics, platforms, platform
            case customUserIDs = "custom_user_ids"
            case interactiveOnly = "interactive-only"
            case audience
        }

        package init(
            devices: [String]? = nil, topics: [String]? = nil, platforms: [String]? = nil, platform: String? = nil,
            customUserIDs: [String]? = nil, interactiveOnly: Bool? = nil, audience: JSONValue? = nil
        ) {
            self.devices = devices
            self.topics = topics
            self.platforms = platforms
            self.platform = platform
            self.customUserIDs = customUserIDs
            self.interactiveOnly = interactiveOnly
            self.audience = audience
        }
    }

    package var message: Message?
    package var target: Target?
    /// Epoch milliseconds after which the push is not delivered.
    package var expiryTime: Int64?
    /// Epoch milliseconds to send at.
    package var scheduleAt: Int64?
    /// Seconds from now to send at.
    package var scheduleIn: Int64?
    /// Check the push and answer, without storing or sending it.
    package var validateOnly: Bool?
    /// A wall-clock time to send at in each device's own time zone (Herald's addition).
    package var scheduleLocal: String?
    /// At most this many devices a second (Herald's addition).
    package var rate: Rate?
    /// What a device's quiet time means for the push: `hold`, `silent` or `ignore` (Herald's
    /// addition), as given; read by `quietTimePolicy`.
    package var quietTime: JSONValue?
    /// A recurring schedule (Herald's addition): `cron`, `time_zone`, `until`, `count`.
    package var schedule: Schedule?

    enum CodingKeys: String, CodingKey {
        case message, target, expiryTime, scheduleAt, scheduleIn
        case validateOnly = "validate_only"
        case scheduleLocal, rate
        case quietTime = "quiet_time"
        case schedule
    }

    package init(
        message: Message? = nil, target: Target? = nil, expiryTime: Int64? = nil, scheduleAt: Int64? = nil,
        scheduleIn: Int64? = nil, validateOnly: Bool? = nil
    ) {
        self.message = message
        self.target = target
        self.expiryTime = expiryTime
        self.scheduleAt = scheduleAt
        self.scheduleIn = scheduleIn
        self.validateOnly = validateOnly
    }
}
