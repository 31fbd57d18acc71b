/// `POST /v1/push` as received, before validation (the Pivotal Push API).
public struct PushInput: Sendable, Equatable, Decodable {
    public struct Message: Sendable, Equatable, Decodable {
        public var body: String?
        /// Per platform: `ios`, `android`, `web`, `windows8`, … (free-form, checked per platform).
        public var custom: [String: JSONValue]?

        public init(body: String? = nil, custom: [String: JSONValue]? = nil) {
            self.body = body
            self.custom = custom
        }
    }

    public struct Target: Sendable, Equatable, Decodable {
        public var devices: [String]?
        public var topics: [String]?
        public var platforms: [String]?
        /// Deprecated single platform (`all`, `ios`, …), added to `platforms`.
        public var platform: String?
        public var customUserIDs: [String]?
        public var interactiveOnly: Bool?
        /// An audience expression (Herald's addition), read by `AudienceExpression.parse` when
        /// the push is checked, so that its faults name their JSON path.
        public var audience: JSONValue?

        enum CodingKeys: String, CodingKey {
            case devices, topics, platforms, platform
            case customUserIDs = "custom_user_ids"
            case interactiveOnly = "interactive-only"
            case audience
        }

        public init(
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

    public var message: Message?
    public var target: Target?
    /// Epoch milliseconds after which the push is not delivered.
    public var expiryTime: Int64?
    /// Epoch milliseconds to send at.
    public var scheduleAt: Int64?
    /// Seconds from now to send at.
    public var scheduleIn: Int64?
    /// Check the push and answer, without storing or sending it.
    public var validateOnly: Bool?
    /// A wall-clock time to send at in each device's own time zone (Herald's addition).
    public var scheduleLocal: String?
    /// At most this many devices a second (Herald's addition).
    public var rate: Rate?
    /// What a device's quiet time means for the push: `hold`, `silent` or `ignore` (Herald's
    /// addition), as given; read by `quietTimePolicy`.
    public var quietTime: JSONValue?
    /// A recurring schedule (Herald's addition): `cron`, `time_zone`, `until`, `count`.
    public var schedule: Schedule?

    enum CodingKeys: String, CodingKey {
        case message, target, expiryTime, scheduleAt, scheduleIn
        case validateOnly = "validate_only"
        case scheduleLocal, rate
        case quietTime = "quiet_time"
        case schedule
    }

    public init(
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
