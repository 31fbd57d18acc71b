import HeraldCore
import Logging

/// Everything Herald keeps, behind one database: the repositories share it and its clock.
package struct Store: Sendable {
    package let database: any SQLDatabase
    package let tenants: TenantRepository
    package let adminTokens: AdminTokenRepository
    package let applications: ApplicationRepository
    package let platforms: PlatformRepository
    /// The APNs provider token each token-auth platform's processes share.
    package let apnsTokens: APNsTokenRepository
    package let devices: DeviceRepository
    package let pushes: PushRepository
    package let topics: TopicRepository
    package let locations: LocationRepository
    package let locationGroups: LocationGroupRepository
    package let geofences: GeofenceRepository
    package let analytics: AnalyticsRepository
    package let schedules: ScheduleRepository
    package let importSnapshots: ImportSnapshotRepository
    package let deliverySettings: DeliverySettingsRepository
    /// Webhook endpoints and the queue of their deliveries.
    package let webhooks: WebhookRepository
    package let migrator: Migrator
    /// Wakes the loops that sleep on due work when work is added, here and (PostgreSQL) in other
    /// processes: see `WorkSignals` and docs/ARCHITECTURE.md.
    package let work: WorkSignals

    /// - Parameters:
    ///   - secretBox: seals credentials and platform secrets at rest.
    ///   - clock: the wall clock the repositories stamp rows with and compare due times against;
    ///     they read it as an instant and write it down as epoch milliseconds, the one place the
    ///     unit changes. Tests pass a `TestClock`'s.
    package init(database: any SQLDatabase, secretBox: SecretBox, clock: EpochClock = .system, logger: Logger) {
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
