import HeraldCore
import Logging

/// Everything Herald keeps, behind one database: the repositories share it and its clock.
public struct Store: Sendable {
    public let database: any SQLDatabase
    public let tenants: TenantRepository
    public let adminTokens: AdminTokenRepository
    public let applications: ApplicationRepository
    public let platforms: PlatformRepository
    /// The APNs provider token each token-auth platform's processes share.
    public let apnsTokens: APNsTokenRepository
    public let devices: DeviceRepository
    public let pushes: PushRepository
    public let topics: TopicRepository
    public let locations: LocationRepository
    public let locationGroups: LocationGroupRepository
    public let geofences: GeofenceRepository
    public let analytics: AnalyticsRepository
    public let schedules: ScheduleRepository
    public let importSnapshots: ImportSnapshotRepository
    public let deliverySettings: DeliverySettingsRepository
    /// Webhook endpoints and the queue of their deliveries.
    public let webhooks: WebhookRepository
    public let migrator: Migrator
    /// Wakes the loops that sleep on due work when work is added, here and (PostgreSQL) in other
    /// processes: see `WorkSignals` and docs/ARCHITECTURE.md.
    public let work: WorkSignals

    /// - Parameters:
    ///   - secretBox: seals credentials and platform secrets at rest.
    ///   - clock: the wall clock the repositories stamp rows with and compare due times against;
    ///     they read it as an instant and write it down as epoch milliseconds, the one place the
    ///     unit changes. Tests pass a `TestClock`'s.
    public init(database: any SQLDatabase, secretBox: SecretBox, clock: EpochClock = .system, logger: Logger) {
        self.database = database
        let work = WorkSignals(database: database)
        self.work = work
        self.tenants = TenantRepository(database: database, clock: clock)
        self.adminTokens = AdminTokenRepository(database: database, clock: clock)
        self.applications = ApplicationRepository(database: database, clock: clock)
        self.webhooks = WebhookRepository(database: database, secretBox: secretBox, clock: clock, work: work)
        self.platforms = PlatformRepository(database: database, secretBox: secretBox, clock: clock, work: work)
        self.apnsTokens = APNsTokenRepository(database: database, secretBox: secretBox, clock: clock)
        self.devices = DeviceRepository(database: database, clock: clock)
        self.pushes = PushRepository(database: database, clock: clock, work: work)
        self.topics = TopicRepository(database: database, clock: clock)
        self.locations = LocationRepository(database: database, clock: clock, work: work)
        self.locationGroups = LocationGroupRepository(database: database, clock: clock)
        self.geofences = GeofenceRepository(database: database, clock: clock, work: work)
        self.analytics = AnalyticsRepository(database: database, clock: clock)
        self.schedules = ScheduleRepository(database: database, clock: clock, work: work)
        self.importSnapshots = ImportSnapshotRepository(database: database, clock: clock)
        self.deliverySettings = DeliverySettingsRepository(database: database)
        self.migrator = Migrator(database: database, clock: clock, logger: logger)
    }
}

